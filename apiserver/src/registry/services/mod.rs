//! The service REST (`KK/pkg/registry/core/service/storage`): the generic store of services with cluster
//! IPs and node ports allocated around each write, as kube-apiserver's service storage does.
//!
//! - Create: a requested cluster IP (`spec.clusterIP`) is allocated as asked, or refused with upstream's 422
//!   (`spec.clusterIPs: Invalid value: []string{"10.0.0.9"}: failed to allocate IP 10.0.0.9: provided IP
//!   is already allocated`); none asked gets the lowest free one; headless (`None`) and ExternalName
//!   services get none. NodePort and LoadBalancer services get node ports the same way. A create that
//!   fails afterwards gives back what it took.
//! - Update and patch: what the body leaves out of the allocated values is kept (`PatchAllocatedValues`);
//!   node ports a type change needs are taken before the write and those it no longer uses are given back
//!   after it (a patch is applied once to the current object first to learn what it needs).
//! - Delete: the service's IP and node ports are given back once the object is gone.
//!
//! Allocations live in etcd ([`allocator`]), so that several apiservers share them. Taking a value and
//! writing the service are two writes, as upstream's are; a crash between them leaks the value, which
//! upstream's repair controller would reclaim and kubesim does not run.

pub mod allocator;

use serde_json::{json, Value};

use crate::registry::error::RegistryError;
use crate::registry::field_error::{BadValue, FieldError, FieldErrorType};
use crate::registry::meta;
use crate::registry::options::{self, CreateOptions, DeleteOptions, UpdateOptions};
use crate::registry::resource::Resource;
use crate::registry::rest::{BoxFuture, PatchFn, Rest};
use crate::registry::store::{ApplyRequest, DeleteResult, ListRequest, Store};
use crate::registry::strategies::services::{self as strategy, keep_allocated, wants_cluster_ip, wants_node_ports};
use crate::registry::strategy::{Strategy, Subresource};
use crate::storage::{GetOptions, ObjectList, Storage, Watcher};

use allocator::{AllocError, Range, RangeAllocator};

/// The default `--service-node-port-range`.
pub(crate) const NODE_PORT_RANGE: Range = Range::Ports { first: 30000, last: 32767 };

/// Where the allocations live, relative to the store's prefix (kube's keys).
pub(crate) const SERVICE_IPS_KEY: &str = "/ranges/serviceips";
pub(crate) const NODE_PORTS_KEY: &str = "/ranges/servicenodeports";

/// The registry of services.
#[derive(Clone)]
pub(crate) struct ServiceRest<S: Storage> {
    store: Store<S>,
    ips: RangeAllocator<S>,
    ports: RangeAllocator<S>,
}

/// What one write took from the ranges, to give back if the write fails.
#[derive(Default)]
struct Taken {
    ips: Vec<u32>,
    ports: Vec<u32>,
}

impl<S: Storage + Clone + 'static> ServiceRest<S> {
    /// Services in `store`, with cluster IPs from `ips` and node ports from `ports`.
    pub(crate) fn new(store: Store<S>, ips: RangeAllocator<S>, ports: RangeAllocator<S>) -> ServiceRest<S> {
        ServiceRest { store, ips, ports }
    }

    fn invalid(&self, obj: &Value, errors: Vec<FieldError>) -> RegistryError {
        RegistryError::Invalid {
            group: String::new(),
            kind: "Service".into(),
            name: meta::get_str(obj, "name").to_string(),
            errors,
        }
    }

    /// Takes the cluster IP the service asks for, or the lowest free one, and writes it into `svc`.
    async fn take_cluster_ip(&self, svc: &mut Value, dry_run: bool, taken: &mut Taken) -> Result<(), RegistryError> {
        if !wants_cluster_ip(svc) {
            return Ok(());
        }
        let asked = svc.pointer("/spec/clusterIP").and_then(Value::as_str).unwrap_or("").to_string();
        let range = self.ips.range().clone();
        let requested = if asked.is_empty() {
            None
        } else {
            match range.offset(&asked) {
                Some(offset) => Some(offset),
                None if asked.parse::<std::net::Ipv4Addr>().is_err() => return Ok(()), // validation says why
                None => return Err(self.ip_error(svc, &asked, &AllocError::NotInRange)),
            }
        };
        match self.ips.allocate(requested, dry_run).await {
            Ok(offset) => {
                let ip = range.value(offset);
                svc["spec"]["clusterIP"] = Value::from(ip.clone());
                svc["spec"]["clusterIPs"] = json!([ip]);
                if !dry_run {
                    taken.ips.push(offset);
                }
                Ok(())
            }
            Err(err @ (AllocError::Allocated | AllocError::NotInRange)) => Err(self.ip_error(svc, &asked, &err)),
            Err(err) => Err(err.internal("serviceIP")),
        }
    }

    fn ip_error(&self, svc: &Value, ip: &str, err: &AllocError) -> RegistryError {
        let detail = format!("failed to allocate IP {ip}: {}", err.message(self.ips.range(), ip));
        let error = FieldError {
            kind: FieldErrorType::Invalid,
            field: "spec.clusterIPs".into(),
            value: BadValue::GoSyntax(format!("[]string{{{}}}", crate::go_text::quote(ip))),
            detail,
        };
        self.invalid(svc, vec![error])
    }

    /// Takes a node port for every port of `svc` that needs one and has none (or asks for a given one).
    /// `keep` are ports the service holds already (an update's old ports): asking for one of them is no
    /// new allocation.
    async fn take_node_ports(
        &self,
        svc: &mut Value,
        keep: &[i64],
        dry_run: bool,
        taken: &mut Taken,
    ) -> Result<(), RegistryError> {
        if !wants_node_ports(svc) {
            return Ok(());
        }
        let count = svc.pointer("/spec/ports").and_then(Value::as_array).map_or(0, Vec::len);
        let range = self.ports.range().clone();
        for i in 0..count {
            let asked = svc["spec"]["ports"][i].get("nodePort").and_then(Value::as_i64).unwrap_or(0);
            if asked != 0 && keep.contains(&asked) {
                continue;
            }
            let requested = if asked == 0 {
                None
            } else {
                match range.offset(&asked.to_string()) {
                    Some(offset) => Some(offset),
                    None => return Err(self.port_error(svc, i, asked, &AllocError::NotInRange)),
                }
            };
            match self.ports.allocate(requested, dry_run).await {
                Ok(offset) => {
                    let port: i64 = range.value(offset).parse().expect("port ranges hold numbers");
                    svc["spec"]["ports"][i]["nodePort"] = Value::from(port);
                    if !dry_run {
                        taken.ports.push(offset);
                    }
                }
                Err(err @ (AllocError::Allocated | AllocError::NotInRange)) => {
                    return Err(self.port_error(svc, i, asked, &err))
                }
                Err(err) => return Err(err.internal("nodePort")),
            }
        }
        Ok(())
    }

    fn port_error(&self, svc: &Value, index: usize, port: i64, err: &AllocError) -> RegistryError {
        let field = format!("spec.ports[{index}].nodePort");
        let error = FieldError::invalid_int(&field, port, &err.message(self.ports.range(), &port.to_string()));
        self.invalid(svc, vec![error])
    }

    /// Gives back what a failed write took. A failure to give back leaks the value; the write's own error
    /// is what the client needs to see.
    async fn give_back(&self, taken: Taken) {
        for offset in taken.ips {
            let _ = self.ips.release(offset).await;
        }
        for offset in taken.ports {
            let _ = self.ports.release(offset).await;
        }
    }

    /// Gives back the IP and node ports `old` held that `new` (None: nothing, the service is gone) does not.
    async fn release_unused(&self, old: &Value, new: Option<&Value>) {
        let ip = |svc: &Value| svc.pointer("/spec/clusterIP").and_then(Value::as_str).unwrap_or("").to_string();
        let old_ip = ip(old);
        if !old_ip.is_empty() && new.map(ip).as_deref() != Some(old_ip.as_str()) {
            if let Some(offset) = self.ips.range().offset(&old_ip) {
                let _ = self.ips.release(offset).await;
            }
        }
        let kept = new.map(node_ports).unwrap_or_default();
        for port in node_ports(old) {
            if !kept.contains(&port) {
                if let Some(offset) = self.ports.range().offset(&port.to_string()) {
                    let _ = self.ports.release(offset).await;
                }
            }
        }
    }

    async fn create(&self, ns: &str, mut obj: Value, opts: &CreateOptions) -> Result<Value, RegistryError> {
        let dry_run = options::dry_run("CreateOptions", &opts.dry_run)?;
        let mut taken = Taken::default();
        let result = async {
            self.take_cluster_ip(&mut obj, dry_run, &mut taken).await?;
            self.take_node_ports(&mut obj, &[], dry_run, &mut taken).await?;
            self.store.create_with(ns, obj, opts).await
        }
        .await;
        if result.is_err() {
            self.give_back(taken).await;
        }
        result
    }

    /// The current object, or `Value::Null` when there is none.
    async fn current(&self, ns: &str, name: &str) -> Result<Value, RegistryError> {
        match self.store.get(ns, name, &GetOptions::default()).await {
            Ok(obj) => Ok(obj),
            Err(err) if err.to_status().code == Some(404) => Ok(Value::Null),
            Err(err) => Err(err),
        }
    }

    async fn update(
        &self,
        ns: &str,
        name: &str,
        mut obj: Value,
        opts: &UpdateOptions,
    ) -> Result<(Value, bool), RegistryError> {
        let dry_run = options::dry_run("UpdateOptions", &opts.dry_run)?;
        let old = self.current(ns, name).await?;
        let mut taken = Taken::default();
        let result = async {
            if old.is_null() {
                // No service to update: the store answers (services do not create on update).
                return self.store.update_with(ns, name, obj, opts).await;
            }
            keep_allocated(&mut obj, &old);
            if obj.pointer("/spec/clusterIP").and_then(Value::as_str).unwrap_or("").is_empty() {
                self.take_cluster_ip(&mut obj, dry_run, &mut taken).await?;
            }
            self.take_node_ports(&mut obj, &node_ports(&old), dry_run, &mut taken).await?;
            self.store.update_with(ns, name, obj, opts).await
        }
        .await;
        match &result {
            Ok((stored, _)) if !dry_run && !old.is_null() => self.release_unused(&old, Some(stored)).await,
            Ok(_) => {}
            Err(_) => self.give_back(taken).await,
        }
        result
    }

    /// Server-side apply through the service's own create and patch, so that an applied service gets
    /// its cluster IP and node ports as a created or patched one does.
    async fn apply(
        &self,
        ns: &str,
        config: Value,
        request: &ApplyRequest<'_>,
        opts: &UpdateOptions,
    ) -> Result<(Value, bool), RegistryError> {
        if request.sub.is_some() {
            return self.store.apply(ns, config, request, opts).await;
        }
        // The apply records its own fields: the create and patch below track nothing more.
        let untracked =
            UpdateOptions { dry_run: opts.dry_run.clone(), field_manager: None, admission: opts.admission.clone() };
        if self.current(ns, request.name).await?.is_null() {
            let obj = self.store.applied(&Value::Null, &config, request)?;
            let create = CreateOptions { dry_run: opts.dry_run.clone(), ..CreateOptions::default() };
            return Ok((ServiceRest::create(self, ns, obj, &create).await?, true));
        }
        let mut produce = |current: &Value| self.store.applied(current, &config, request);
        Ok((ServiceRest::patch(self, ns, request.name, None, &mut produce, &untracked).await?, false))
    }

    async fn patch(
        &self,
        ns: &str,
        name: &str,
        sub: Option<Subresource>,
        apply: PatchFn<'_>,
        opts: &UpdateOptions,
    ) -> Result<Value, RegistryError> {
        if sub.is_some() {
            return self.store.patch(ns, name, sub, apply, opts).await;
        }
        let dry_run = options::dry_run("UpdateOptions", &opts.dry_run)?;
        let old = self.current(ns, name).await?;
        if old.is_null() {
            return self.store.patch(ns, name, sub, apply, opts).await;
        }
        // What the patch needs, learnt from applying it once to the current object.
        let mut probe = apply(&old)?;
        keep_allocated(&mut probe, &old);
        let mut taken = Taken::default();
        if let Err(err) = self.take_node_ports(&mut probe, &node_ports(&old), dry_run, &mut taken).await {
            self.give_back(taken).await;
            return Err(err);
        }
        let fresh: Vec<(usize, Value)> = probe
            .pointer("/spec/ports")
            .and_then(Value::as_array)
            .map(|ports| {
                ports.iter().enumerate().map(|(i, p)| (i, p.get("nodePort").cloned().unwrap_or(Value::Null))).collect()
            })
            .unwrap_or_default();
        let mut with_allocations = |current: &Value| -> Result<Value, RegistryError> {
            let mut new = apply(current)?;
            keep_allocated(&mut new, current);
            if wants_node_ports(&new) {
                for (i, port) in &fresh {
                    let slot = new.pointer_mut(&format!("/spec/ports/{i}"));
                    if let Some(slot) = slot.filter(|s| s.get("nodePort").and_then(Value::as_i64).unwrap_or(0) == 0) {
                        if !port.is_null() {
                            slot["nodePort"] = port.clone();
                        }
                    }
                }
            }
            Ok(new)
        };
        let result = self.store.patch(ns, name, None, &mut with_allocations, opts).await;
        match &result {
            Ok(stored) if !dry_run => self.release_unused(&old, Some(stored)).await,
            Ok(_) => {}
            Err(_) => self.give_back(taken).await,
        }
        result
    }

    async fn delete(&self, ns: &str, name: &str, opts: &DeleteOptions) -> Result<DeleteResult, RegistryError> {
        let dry_run = options::dry_run("DeleteOptions", &opts.dry_run)?;
        let old = self.current(ns, name).await?;
        let result = self.store.delete_with(ns, name, opts).await?;
        if result.deleted && !dry_run && !old.is_null() {
            self.release_unused(&old, None).await;
        }
        Ok(result)
    }

    async fn delete_collection(
        &self,
        ns: &str,
        request: &ListRequest,
        opts: &DeleteOptions,
    ) -> Result<ObjectList, RegistryError> {
        let dry_run = options::dry_run("DeleteOptions", &opts.dry_run)?;
        let deleted = self.store.delete_collection(ns, request, opts).await?;
        if !dry_run {
            for svc in &deleted.items {
                // Only services that are gone give their values back (finalizers keep the rest).
                let name = meta::get_str(svc, "name");
                let namespace = meta::get_str(svc, "namespace");
                if self.current(namespace, name).await.is_ok_and(|v| v.is_null()) {
                    self.release_unused(svc, None).await;
                }
            }
        }
        Ok(deleted)
    }
}

/// The node ports a service holds.
fn node_ports(svc: &Value) -> Vec<i64> {
    svc.pointer("/spec/ports")
        .and_then(Value::as_array)
        .map(|ports| {
            ports.iter().filter_map(|p| p.get("nodePort").and_then(Value::as_i64)).filter(|p| *p != 0).collect()
        })
        .unwrap_or_default()
}

impl<S: Storage + Clone + 'static> Rest for ServiceRest<S> {
    fn strategy(&self) -> &dyn Strategy {
        self.store.strategy()
    }

    fn get<'a>(
        &'a self,
        ns: &'a str,
        name: &'a str,
        opts: &'a GetOptions,
    ) -> BoxFuture<'a, Result<Value, RegistryError>> {
        Box::pin(self.store.get(ns, name, opts))
    }

    fn list<'a>(&'a self, ns: &'a str, request: &'a ListRequest) -> BoxFuture<'a, Result<ObjectList, RegistryError>> {
        Box::pin(self.store.list(ns, request))
    }

    fn watch<'a>(&'a self, ns: &'a str, request: &'a ListRequest) -> BoxFuture<'a, Result<Watcher, RegistryError>> {
        Box::pin(self.store.watch(ns, request))
    }

    fn create<'a>(
        &'a self,
        ns: &'a str,
        obj: Value,
        opts: &'a CreateOptions,
    ) -> BoxFuture<'a, Result<Value, RegistryError>> {
        Box::pin(ServiceRest::create(self, ns, obj, opts))
    }

    fn update<'a>(
        &'a self,
        ns: &'a str,
        name: &'a str,
        obj: Value,
        opts: &'a UpdateOptions,
    ) -> BoxFuture<'a, Result<(Value, bool), RegistryError>> {
        Box::pin(ServiceRest::update(self, ns, name, obj, opts))
    }

    fn update_subresource<'a>(
        &'a self,
        ns: &'a str,
        name: &'a str,
        sub: Subresource,
        obj: Value,
        opts: &'a UpdateOptions,
    ) -> BoxFuture<'a, Result<Value, RegistryError>> {
        Box::pin(self.store.update_subresource(ns, name, sub, obj, opts))
    }

    fn patch<'a>(
        &'a self,
        ns: &'a str,
        name: &'a str,
        sub: Option<Subresource>,
        apply: PatchFn<'a>,
        opts: &'a UpdateOptions,
    ) -> BoxFuture<'a, Result<Value, RegistryError>> {
        Box::pin(ServiceRest::patch(self, ns, name, sub, apply, opts))
    }

    fn apply<'a>(
        &'a self,
        ns: &'a str,
        config: Value,
        request: &'a ApplyRequest<'a>,
        opts: &'a UpdateOptions,
    ) -> BoxFuture<'a, Result<(Value, bool), RegistryError>> {
        Box::pin(ServiceRest::apply(self, ns, config, request, opts))
    }

    fn delete<'a>(
        &'a self,
        ns: &'a str,
        name: &'a str,
        opts: &'a DeleteOptions,
    ) -> BoxFuture<'a, Result<DeleteResult, RegistryError>> {
        Box::pin(ServiceRest::delete(self, ns, name, opts))
    }

    fn delete_collection<'a>(
        &'a self,
        ns: &'a str,
        request: &'a ListRequest,
        opts: &'a DeleteOptions,
    ) -> BoxFuture<'a, Result<ObjectList, RegistryError>> {
        Box::pin(ServiceRest::delete_collection(self, ns, request, opts))
    }
}

/// The strategy's descriptor, re-exported for the catalog.
pub(crate) fn resource() -> Resource {
    strategy::resource()
}
