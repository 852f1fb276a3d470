"""A dict body to a patch call: the client sends it as a strategic merge patch, which kube-apiserver applies
to built-in kinds (maps merge, `null` deletes a key, lists with a patch merge key merge by that key).

Until kubesim serves strategic merge patch it answers 415 UnsupportedMediaType, and this script fails with
that answer.
"""

from kubernetes import client

from kubesim_check import connect, eq, finish, say

api = client.CoreV1Api(connect())
NS = "default"

api.create_namespaced_config_map(NS, {"metadata": {"name": "smp", "labels": {"a": "1"}}, "data": {"k": "v"}})

say("strategic merge patch of a configmap")
try:
    patched = api.patch_namespaced_config_map("smp", NS, {"metadata": {"labels": {"a": None, "b": "2"}}, "data": {"k2": "v2"}})
except client.ApiException as err:
    raise AssertionError(
        "PATCH with Content-Type application/strategic-merge-patch+json (what the Python client sends for a"
        f" dict body) answered {err.status} {err.reason}: {err.body}; kube-apiserver applies it"
    ) from None
eq(patched.data, {"k": "v", "k2": "v2"}, "maps merge")
eq(patched.metadata.labels, {"b": "2"}, "null deletes a key")

say("strategic merge patch of a pod's containers, merged by name")
api.create_namespaced_pod(
    NS,
    {
        "metadata": {"name": "two"},
        "spec": {"containers": [{"name": "a", "image": "busybox:1"}, {"name": "b", "image": "nginx:1"}]},
    },
)
pod = api.patch_namespaced_pod("two", NS, {"spec": {"containers": [{"name": "b", "image": "nginx:2"}]}})
eq([(c.name, c.image) for c in pod.spec.containers], [("a", "busybox:1"), ("b", "nginx:2")], "containers")

finish()
