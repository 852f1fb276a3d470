//! The protobuf envelope every document travels in: the magic `k8s\0`, then a `runtime.Unknown` message
//! `{typeMeta: {apiVersion, kind}, raw, contentEncoding, contentType}` whose `raw` is the object's own
//! message; and the `metav1.WatchEvent` `{type, object: {raw}}` of watch streams. Both are a few fields of
//! the protobuf wire format, written and read here directly.

/// The magic bytes that open a protobuf document.
pub(crate) const MAGIC: [u8; 4] = [0x6b, 0x38, 0x73, 0x00];

/// What an envelope says.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Unknown {
    pub api_version: String,
    pub kind: String,
    pub raw: Vec<u8>,
}

/// Wraps `raw`, the message of an object of `api_version`/`kind`, in an envelope.
pub(crate) fn seal(api_version: &str, kind: &str, raw: &[u8]) -> Vec<u8> {
    let mut type_meta = Vec::new();
    put_bytes(&mut type_meta, 1, api_version.as_bytes());
    put_bytes(&mut type_meta, 2, kind.as_bytes());
    let mut out = Vec::with_capacity(raw.len() + type_meta.len() + 16);
    out.extend_from_slice(&MAGIC);
    put_bytes(&mut out, 1, &type_meta);
    put_bytes(&mut out, 2, raw);
    out
}

/// Opens an envelope; the error is kube's words for what is wrong.
pub(crate) fn open(data: &[u8]) -> Result<Unknown, String> {
    let Some(body) = data.strip_prefix(&MAGIC) else {
        // Go's `%v` of a byte slice: `[107 56 115 0]`.
        let prefix: Vec<String> = MAGIC.iter().map(u8::to_string).collect();
        return Err(format!(
            "provided data does not appear to be a protobuf message, expected prefix [{}]",
            prefix.join(" ")
        ));
    };
    let mut unknown = Unknown::default();
    for field in fields(body).map_err(|e| format!("proto: Unknown: {e}"))? {
        match field {
            (1, Field::Bytes(type_meta)) => {
                for inner in fields(type_meta).map_err(|e| format!("proto: TypeMeta: {e}"))? {
                    match inner {
                        (1, Field::Bytes(v)) => unknown.api_version = String::from_utf8_lossy(v).into_owned(),
                        (2, Field::Bytes(v)) => unknown.kind = String::from_utf8_lossy(v).into_owned(),
                        _ => {}
                    }
                }
            }
            (2, Field::Bytes(raw)) => unknown.raw = raw.to_vec(),
            // contentEncoding and contentType: kube sends neither and accepts only their absence.
            _ => {}
        }
    }
    Ok(unknown)
}

/// One length-prefixed frame of a watch stream: a `WatchEvent` of `event_kind` whose object is `document`.
pub(crate) fn watch_frame(event_kind: &str, document: &[u8]) -> Vec<u8> {
    let mut raw_extension = Vec::with_capacity(document.len() + 8);
    put_bytes(&mut raw_extension, 1, document);
    let mut event = Vec::with_capacity(raw_extension.len() + 16);
    put_bytes(&mut event, 1, event_kind.as_bytes());
    put_bytes(&mut event, 2, &raw_extension);
    let mut frame = Vec::with_capacity(event.len() + 4);
    frame.extend_from_slice(&(event.len() as u32).to_be_bytes());
    frame.extend_from_slice(&event);
    frame
}

/// Reads a `WatchEvent` (a frame without its length): the event kind and its object's document.
pub(crate) fn read_watch_event(event: &[u8]) -> Result<(String, Vec<u8>), String> {
    let (mut kind, mut document) = (String::new(), Vec::new());
    for field in fields(event)? {
        match field {
            (1, Field::Bytes(v)) => kind = String::from_utf8_lossy(v).into_owned(),
            (2, Field::Bytes(raw_extension)) => {
                for inner in fields(raw_extension)? {
                    if let (1, Field::Bytes(v)) = inner {
                        document = v.to_vec();
                    }
                }
            }
            _ => {}
        }
    }
    Ok((kind, document))
}

/// A field's value on the wire.
enum Field<'a> {
    Varint,
    Bytes(&'a [u8]),
    Fixed,
}

/// The fields of a message, in order; the error says where it stopped making sense.
fn fields(mut data: &[u8]) -> Result<Vec<(u64, Field<'_>)>, String> {
    let mut out = Vec::new();
    while !data.is_empty() {
        let key = varint(&mut data)?;
        let (number, wire) = (key >> 3, key & 7);
        if number == 0 {
            return Err(format!("illegal tag 0 (wire type {wire})"));
        }
        let value = match wire {
            0 => {
                varint(&mut data)?;
                Field::Varint
            }
            1 => skip(&mut data, 8)?,
            2 => {
                let len =
                    usize::try_from(varint(&mut data)?).map_err(|_| "negative length found during unmarshaling")?;
                if len > data.len() {
                    return Err("unexpected EOF".into());
                }
                let (bytes, rest) = data.split_at(len);
                data = rest;
                Field::Bytes(bytes)
            }
            5 => skip(&mut data, 4)?,
            other => return Err(format!("illegal wireType {other} for field {number}")),
        };
        out.push((number, value));
    }
    Ok(out)
}

fn skip<'a>(data: &mut &'a [u8], n: usize) -> Result<Field<'a>, String> {
    if data.len() < n {
        return Err("unexpected EOF".into());
    }
    *data = &data[n..];
    Ok(Field::Fixed)
}

fn varint(data: &mut &[u8]) -> Result<u64, String> {
    let mut value = 0u64;
    for shift in 0..10 {
        let Some((&byte, rest)) = data.split_first() else { return Err("unexpected EOF".into()) };
        *data = rest;
        value |= u64::from(byte & 0x7f) << (7 * shift);
        if byte & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err("integer overflow".into())
}

fn put_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

fn put_bytes(out: &mut Vec<u8>, number: u64, bytes: &[u8]) {
    put_varint(out, (number << 3) | 2);
    put_varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_envelope_round_trips() {
        let sealed = seal("v1", "ConfigMap", b"\x0a\x03abc");
        assert!(sealed.starts_with(&MAGIC));
        let unknown = open(&sealed).unwrap();
        assert_eq!(
            unknown,
            Unknown { api_version: "v1".into(), kind: "ConfigMap".into(), raw: b"\x0a\x03abc".to_vec() }
        );
    }

    #[test]
    fn bad_envelopes_are_refused_in_kubes_words() {
        assert_eq!(
            open(b"{\"kind\":1}").unwrap_err(),
            "provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]"
        );
        assert_eq!(open(b"k8s\x00\x0a\x05ab").unwrap_err(), "proto: Unknown: unexpected EOF");
        assert_eq!(open(b"k8s\x00\x00").unwrap_err(), "proto: Unknown: illegal tag 0 (wire type 0)");
    }

    #[test]
    fn a_watch_frame_round_trips() {
        let frame = watch_frame("ADDED", b"k8s\x00doc");
        let len = u32::from_be_bytes(frame[..4].try_into().unwrap()) as usize;
        assert_eq!(len, frame.len() - 4);
        assert_eq!(read_watch_event(&frame[4..]).unwrap(), ("ADDED".to_string(), b"k8s\x00doc".to_vec()));
    }
}
