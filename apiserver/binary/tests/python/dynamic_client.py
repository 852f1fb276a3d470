"""`dynamic.DynamicClient`: discovery of the served resources (kind to resource, scope, verbs, subresources),
then CRUD, list and watch of configmaps through the discovered resource, and the client's error for a
kind nobody serves.
"""

from kubernetes import client, dynamic
from kubernetes.dynamic.exceptions import ConflictError, NotFoundError, ResourceNotFoundError

from kubesim_check import check, connect, eq, finish, say

dc = dynamic.DynamicClient(connect())
NS = "default"

say("discover v1 ConfigMap, Namespace and Pod")
configmaps = dc.resources.get(api_version="v1", kind="ConfigMap")
eq(configmaps.name, "configmaps", "ConfigMap's resource")
eq(configmaps.namespaced, True, "ConfigMap is namespaced")
check({"create", "get", "list", "watch", "patch", "update", "delete", "deletecollection"} <= set(configmaps.verbs), f"verbs: {configmaps.verbs}")
check("cm" in configmaps.short_names, f"short names: {configmaps.short_names}")
namespaces = dc.resources.get(api_version="v1", kind="Namespace")
eq((namespaces.name, namespaces.namespaced), ("namespaces", False), "Namespace's resource and scope")
pods = dc.resources.get(api_version="v1", kind="Pod")
eq(pods.subresources["status"].kind, "Pod", "pods/status is discovered")
eq([r.name for r in dc.resources.search(kind="Pod", group="")], ["pods"], "a search by kind")

say("a kind nobody serves")
try:
    dc.resources.get(api_version="v1", kind="NoSuchKind")
    raise AssertionError("NoSuchKind was discovered")
except ResourceNotFoundError as err:
    say("  ->", type(err).__name__)

say("create, get, list, patch, replace and delete through it")
created = configmaps.create(namespace=NS, body={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "dyn", "labels": {"via": "dynamic"}}, "data": {"a": "1"}})
eq(created.metadata.name, "dyn", "the created name")
eq(created.data.a, "1", "the created data")
got = configmaps.get(name="dyn", namespace=NS)
eq(got.metadata.uid, created.metadata.uid, "the read uid")
listed = configmaps.get(namespace=NS, label_selector="via=dynamic")
eq(listed.kind, "ConfigMapList", "the list's kind")
eq([item.metadata.name for item in listed.items], ["dyn"], "the listed names")
patched = configmaps.patch(
    name="dyn", namespace=NS, body={"data": {"b": "2"}}, content_type="application/merge-patch+json"
)
eq(patched.data.to_dict(), {"a": "1", "b": "2"}, "the patched data")
body = patched.to_dict()
body["data"]["c"] = "3"
replaced = configmaps.replace(namespace=NS, body=body)
eq(replaced.data.to_dict(), {"a": "1", "b": "2", "c": "3"}, "the replaced data")

say("a stale replace through it")
stale = patched.to_dict()
try:
    configmaps.replace(namespace=NS, body=stale)
    raise AssertionError("a replace with a stale resourceVersion succeeded")
except ConflictError as err:
    eq(err.status, 409, "the conflict's status")

say("watch through it")
events = []
start = replaced.metadata.resourceVersion
configmaps.delete(name="dyn", namespace=NS)
for event in dc.watch(configmaps, namespace=NS, resource_version=start, timeout=10):
    events.append((event["type"], event["object"].metadata.name))
    break
eq(events, [("DELETED", "dyn")], "the watched delete")

say("get it after the delete")
try:
    configmaps.get(name="dyn", namespace=NS)
    raise AssertionError("the deleted configmap is still there")
except NotFoundError as err:
    eq(err.status, 404, "the read's status")

say("cluster-scoped resources through it")
names = [ns.metadata.name for ns in namespaces.get().items]
check("default" in names, f"default is listed: {names}")

finish()
