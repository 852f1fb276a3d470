"""CoreV1Api on configmaps: create, read, list, replace, JSON patch, JSON merge patch and delete, with the
errors kube-apiserver gives for a duplicate, a failed patch test and a missing object.

The strategic merge patch, which the client sends for a dict body, is in strategic_merge_patch.py.
"""

from kubernetes import client

from kubesim_check import check, connect, eq, expect_status, finish, say

api = client.CoreV1Api(connect())
NS = "default"

say("create configmap settings")
body = client.V1ConfigMap(
    metadata=client.V1ObjectMeta(name="settings", labels={"app": "web"}),
    data={"mode": "fast", "level": "3"},
)
created = api.create_namespaced_config_map(NS, body)
eq(created.metadata.name, "settings", "the created name")
eq(created.metadata.namespace, NS, "the created namespace")
eq(created.data, {"mode": "fast", "level": "3"}, "the created data")
check(created.metadata.uid, "a uid is assigned")
check(created.metadata.resource_version, "a resourceVersion is assigned")
check(created.metadata.creation_timestamp is not None, "a creationTimestamp is assigned")
say("  ->", "rv", created.metadata.resource_version)

say("create it again")
expect_status(
    api.create_namespaced_config_map,
    409,
    "AlreadyExists",
    NS,
    body,
    message='configmaps "settings" already exists',
)

say("read it")
got = api.read_namespaced_config_map("settings", NS)
eq(got.metadata.uid, created.metadata.uid, "the read uid")
eq(got.metadata.resource_version, created.metadata.resource_version, "the read resourceVersion")
eq(got.data, created.data, "the read data")

say("list by label")
api.create_namespaced_config_map(NS, {"metadata": {"name": "other", "labels": {"app": "db"}}})
listed = api.list_namespaced_config_map(NS, label_selector="app=web")
eq([cm.metadata.name for cm in listed.items], ["settings"], "names listed with app=web")
check(listed.metadata.resource_version, "the list carries a resourceVersion")
everything = api.list_namespaced_config_map(NS)
check({"settings", "other"} <= {cm.metadata.name for cm in everything.items}, "the full list has both")
across = api.list_config_map_for_all_namespaces(label_selector="app=web")
eq([(cm.metadata.namespace, cm.metadata.name) for cm in across.items], [(NS, "settings")], "all namespaces")

say("replace it")
got.data["mode"] = "slow"
replaced = api.replace_namespaced_config_map("settings", NS, got)
eq(replaced.data, {"mode": "slow", "level": "3"}, "the replaced data")
check(replaced.metadata.resource_version != got.metadata.resource_version, "a replace moves the resourceVersion")
eq(replaced.metadata.uid, created.metadata.uid, "a replace keeps the uid")
say("  ->", "rv", replaced.metadata.resource_version)

say("JSON patch it (a list body)")
patched = api.patch_namespaced_config_map(
    "settings",
    NS,
    [
        {"op": "test", "path": "/data/mode", "value": "slow"},
        {"op": "add", "path": "/data/extra", "value": "yes"},
        {"op": "remove", "path": "/data/level"},
    ],
)
eq(patched.data, {"mode": "slow", "extra": "yes"}, "the JSON-patched data")

say("JSON patch with a failing test")
# kube-apiserver answers with NewGenericServerResponse(422): reason Invalid and a fixed message.
expect_status(
    api.patch_namespaced_config_map,
    422,
    "Invalid",
    "settings",
    NS,
    [{"op": "test", "path": "/data/mode", "value": "fast"}],
    message="the server rejected our request due to an error in our request",
)

say("JSON merge patch it")
merged = api.patch_namespaced_config_map(
    "settings",
    NS,
    {"metadata": {"labels": {"tier": "front"}}, "data": {"extra": None, "added": "1"}},
    _content_type="application/merge-patch+json",
)
eq(merged.data, {"mode": "slow", "added": "1"}, "the merge-patched data")
eq(merged.metadata.labels, {"app": "web", "tier": "front"}, "the merge-patched labels")

say("delete it")
# The client leaves a configmap's delete answer undecoded: kube-apiserver sends a Success Status.
status = api.delete_namespaced_config_map("settings", NS)
eq(status["kind"], "Status", "the delete's kind")
eq(status["status"], "Success", "the delete's Status")
eq(status["details"]["name"], "settings", "the delete's details.name")
eq(status["details"]["kind"], "configmaps", "the delete's details.kind (the resource, as kube-apiserver puts it)")
eq(status["details"]["uid"], created.metadata.uid, "the delete's details.uid")

say("read and delete it again")
expect_status(
    api.read_namespaced_config_map,
    404,
    "NotFound",
    "settings",
    NS,
    message='configmaps "settings" not found',
)
expect_status(api.delete_namespaced_config_map, 404, "NotFound", "settings", NS)

say("create in a namespace that does not exist")
expect_status(
    api.create_namespaced_config_map,
    404,
    "NotFound",
    "nowhere",
    {"metadata": {"name": "x"}},
    message='namespaces "nowhere" not found',
)

say("create with an invalid name")
status = expect_status(api.create_namespaced_config_map, 422, "Invalid", NS, {"metadata": {"name": "Not_Valid"}})
eq(status["details"]["kind"], "ConfigMap", "an Invalid's details.kind")
eq(status["details"]["causes"][0]["field"], "metadata.name", "an Invalid's cause field")

finish()
