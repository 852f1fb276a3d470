//! [`RangeAllocator`]: service cluster IPs and node ports, handed out from a range and recorded in etcd
//! as one `RangeAllocation` object per range (kube-apiserver's `/registry/ranges/serviceips` and
//! `/registry/ranges/servicenodeports`), so that every apiserver of a cluster sees the same allocations:
//! each change is a compare-and-swap of that object, retried on conflict.
//!
//! Allocation is deterministic: a request for any value gets the lowest free one (upstream scans from a
//! random offset; a seeded simulation wants the same answer every run). IPv4 ranges only.

use std::net::Ipv4Addr;

use base64::Engine;
use serde_json::{json, Value};

use crate::registry::error::RegistryError;
use crate::storage::{Storage, StorageError};

/// A range of values: IPv4 addresses of a CIDR (without its network and broadcast addresses), or ports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Range {
    /// `10.0.0.0/24`: the network address and the size of the block.
    Ipv4 { network: u32, prefix_len: u8 },
    /// `30000-32767`, inclusive.
    Ports { first: u16, last: u16 },
}

impl Range {
    /// Parses a CIDR such as `10.0.0.0/24` (the `--service-cluster-ip-range` flag).
    pub fn parse_cidr(text: &str) -> Result<Range, String> {
        let (ip, len) = text.split_once('/').ok_or_else(|| format!("invalid CIDR address: {text}"))?;
        let ip: Ipv4Addr = ip.parse().map_err(|_| format!("invalid CIDR address: {text}"))?;
        let prefix_len: u8 =
            len.parse().ok().filter(|l| *l <= 30).ok_or_else(|| format!("invalid CIDR address: {text}"))?;
        let mask = if prefix_len == 0 { 0 } else { u32::MAX << (32 - prefix_len) };
        Ok(Range::Ipv4 { network: u32::from(ip) & mask, prefix_len })
    }

    /// The text the `RangeAllocation` records (`10.0.0.0/24`, `30000-32767`).
    pub(crate) fn text(&self) -> String {
        match self {
            Range::Ipv4 { network, prefix_len } => format!("{}/{prefix_len}", Ipv4Addr::from(*network)),
            Range::Ports { first, last } => format!("{first}-{last}"),
        }
    }

    /// How many values the range hands out.
    fn size(&self) -> u32 {
        match self {
            // Neither the network address nor the broadcast address.
            Range::Ipv4 { prefix_len, .. } => (1u32 << (32 - prefix_len)) - 2,
            Range::Ports { first, last } => u32::from(last - first) + 1,
        }
    }

    /// The offset of `value` in the range, if it is in it.
    pub(crate) fn offset(&self, value: &str) -> Option<u32> {
        match self {
            Range::Ipv4 { network, .. } => {
                let ip = u32::from(value.parse::<Ipv4Addr>().ok()?);
                let offset = ip.checked_sub(*network)?.checked_sub(1)?;
                (offset < self.size()).then_some(offset)
            }
            Range::Ports { first, .. } => {
                let port: u32 = value.parse().ok()?;
                let offset = port.checked_sub(u32::from(*first))?;
                (offset < self.size()).then_some(offset)
            }
        }
    }

    /// The value at `offset`.
    pub(crate) fn value(&self, offset: u32) -> String {
        match self {
            Range::Ipv4 { network, .. } => Ipv4Addr::from(network + 1 + offset).to_string(),
            Range::Ports { first, .. } => (u32::from(*first) + offset).to_string(),
        }
    }
}

/// Why an allocation failed.
#[derive(Clone, Debug)]
pub(crate) enum AllocError {
    /// The value asked for is taken (`ErrAllocated`).
    Allocated,
    /// The value asked for is outside the range (`ErrNotInRange`).
    NotInRange,
    /// No value is free (`ErrFull`).
    Full,
    /// The allocation could not be read or written.
    Storage(StorageError),
}

/// Allocations from one range, kept in etcd at `key`.
#[derive(Clone)]
pub(crate) struct RangeAllocator<S> {
    storage: S,
    key: String,
    range: Range,
}

impl<S: Storage + Clone> RangeAllocator<S> {
    pub(crate) fn new(storage: S, key: &str, range: Range) -> RangeAllocator<S> {
        RangeAllocator { storage, key: key.to_string(), range }
    }

    pub(crate) fn range(&self) -> &Range {
        &self.range
    }

    /// Allocates `requested` (an offset in the range), or the lowest free value when `None`. With
    /// `dry_run`, only says what would be allocated.
    pub(crate) async fn allocate(&self, requested: Option<u32>, dry_run: bool) -> Result<u32, AllocError> {
        let mut chosen = None;
        let mut refused = None;
        let range = self.range.clone();
        let update = |current: Value, _meta| {
            let mut bits = bitmap(&current, &range);
            let offset = match requested {
                Some(offset) if bits.get(offset) => {
                    refused = Some(AllocError::Allocated);
                    return Err(StorageError::Backend("provided IP is already allocated".into()));
                }
                Some(offset) => offset,
                None => match bits.first_free() {
                    Some(offset) => offset,
                    None => {
                        refused = Some(AllocError::Full);
                        return Err(StorageError::Backend("range is full".into()));
                    }
                },
            };
            chosen = Some(offset);
            bits.set(offset, true);
            Ok(allocation_object(&range, &bits))
        };
        if dry_run {
            let current = self.read().await.map_err(AllocError::Storage)?;
            let mut update = update;
            update(current, crate::storage::ResponseMeta { resource_version: Default::default() })
                .map_err(|e| refused.clone().unwrap_or(AllocError::Storage(e)))?;
        } else {
            let result = self.storage.guaranteed_update(&self.key, true, None, update, None).await;
            if let Err(err) = result {
                return Err(refused.unwrap_or(AllocError::Storage(err)));
            }
        }
        chosen.ok_or(AllocError::Full)
    }

    /// Releases `offset`; releasing a free value changes nothing.
    pub(crate) async fn release(&self, offset: u32) -> Result<(), StorageError> {
        let range = self.range.clone();
        let update = |current: Value, _meta| {
            let mut bits = bitmap(&current, &range);
            bits.set(offset, false);
            Ok(allocation_object(&range, &bits))
        };
        self.storage.guaranteed_update(&self.key, true, None, update, None).await.map(drop)
    }

    async fn read(&self) -> Result<Value, StorageError> {
        match self.storage.get(&self.key, &crate::storage::GetOptions::default()).await {
            Ok(v) => Ok(v),
            Err(StorageError::KeyNotFound { .. }) => Ok(Value::Null),
            Err(e) => Err(e),
        }
    }
}

impl AllocError {
    /// The message upstream's allocators give (`ipallocator`, `portallocator`).
    pub(crate) fn message(&self, range: &Range, value: &str) -> String {
        match self {
            AllocError::Allocated => match range {
                Range::Ipv4 { .. } => "provided IP is already allocated".into(),
                Range::Ports { .. } => "provided port is already allocated".into(),
            },
            AllocError::NotInRange => match range {
                Range::Ipv4 { .. } => format!(
                    "the provided IP ({value}) is not in the valid range. The range of valid IPs is {}",
                    range.text()
                ),
                Range::Ports { .. } => {
                    format!("provided port is not in the valid range. The range of valid ports is {}", range.text())
                }
            },
            AllocError::Full => "range is full".into(),
            AllocError::Storage(e) => e.to_string(),
        }
    }

    /// The registry error of a failed allocation that is not the client's fault.
    pub(crate) fn internal(&self, what: &str) -> RegistryError {
        RegistryError::Internal(format!(
            "failed to allocate a {what}: {}",
            match self {
                AllocError::Storage(e) => e.to_string(),
                _ => "range is full".to_string(),
            }
        ))
    }
}

/// The allocation bitmap, one bit per value.
struct Bitmap {
    bits: Vec<u8>,
    size: u32,
}

impl Bitmap {
    fn get(&self, offset: u32) -> bool {
        self.bits.get((offset / 8) as usize).is_some_and(|b| b & (1 << (offset % 8)) != 0)
    }

    fn set(&mut self, offset: u32, on: bool) {
        let byte = (offset / 8) as usize;
        if self.bits.len() <= byte {
            self.bits.resize(byte + 1, 0);
        }
        if on {
            self.bits[byte] |= 1 << (offset % 8);
        } else {
            self.bits[byte] &= !(1 << (offset % 8));
        }
    }

    fn first_free(&self) -> Option<u32> {
        (0..self.size).find(|o| !self.get(*o))
    }
}

fn bitmap(current: &Value, range: &Range) -> Bitmap {
    let data = current.get("data").and_then(Value::as_str).unwrap_or("");
    let bits = base64::engine::general_purpose::STANDARD.decode(data).unwrap_or_default();
    Bitmap { bits, size: range.size() }
}

fn allocation_object(range: &Range, bits: &Bitmap) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "RangeAllocation",
        "metadata": {},
        "range": range.text(),
        "data": base64::engine::general_purpose::STANDARD.encode(&bits.bits),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_map_values_to_offsets() {
        let ips = Range::parse_cidr("10.0.0.0/24").unwrap();
        assert_eq!(ips.size(), 254);
        assert_eq!(ips.offset("10.0.0.1"), Some(0));
        assert_eq!(ips.value(9), "10.0.0.10");
        assert_eq!(ips.offset("10.0.0.0"), None);
        assert_eq!(ips.offset("10.0.0.255"), None);
        assert_eq!(ips.offset("10.0.1.1"), None);
        let ports = Range::Ports { first: 30000, last: 32767 };
        assert_eq!(ports.offset("30080"), Some(80));
        assert_eq!(ports.offset("80"), None);
        assert_eq!(ports.text(), "30000-32767");
        assert!(Range::parse_cidr("10.0.0.0").is_err());
    }

    #[test]
    fn a_bitmap_finds_the_lowest_free_value() {
        let mut bits = Bitmap { bits: Vec::new(), size: 20 };
        bits.set(0, true);
        bits.set(1, true);
        bits.set(9, true);
        assert_eq!(bits.first_free(), Some(2));
        bits.set(1, false);
        assert_eq!(bits.first_free(), Some(1));
    }
}
