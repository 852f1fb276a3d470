"""A dict body to a patch call: the client sends it as a strategic merge patch
(`application/strategic-merge-patch+json`), which kube-apiserver applies to built-in kinds: maps merge,
`null` deletes a key, lists with a patch merge key merge by that key (a pod's containers by name), other
lists are replaced. A list element without its merge key is refused and changes nothing.
"""

import json

from kubernetes import client

from kubesim_check import connect, eq, finish, say

api = client.CoreV1Api(connect())
NS = "default"

api.create_namespaced_config_map(NS, {"metadata": {"name": "smp", "labels": {"a": "1"}}, "data": {"k": "v"}})

say("strategic merge patch of a configmap: maps merge, null deletes")
cm = api.patch_namespaced_config_map("smp", NS, {"metadata": {"labels": {"a": None, "b": "2"}}, "data": {"k2": "v2"}})
eq(cm.data, {"k": "v", "k2": "v2"}, "data")
eq(cm.metadata.labels, {"b": "2"}, "labels")

# The ServiceAccount admission plugin wants the namespace's `default` account, which no controller makes here.
api.create_namespaced_service_account(NS, {"metadata": {"name": "default"}})
say("a pod's containers merge by name")
api.create_namespaced_pod(
    NS,
    client.V1Pod(
        metadata=client.V1ObjectMeta(name="smp-pod"),
        spec=client.V1PodSpec(
            containers=[
                client.V1Container(name="main", image="nginx:1.27", args=["a", "b"]),
                client.V1Container(name="side", image="busybox:1.36"),
            ]
        ),
    ),
)
pod = api.patch_namespaced_pod("smp-pod", NS, {"spec": {"containers": [{"name": "side", "image": "busybox:1.37"}]}})
eq([(c.name, c.image) for c in pod.spec.containers], [("main", "nginx:1.27"), ("side", "busybox:1.37")], "containers")
eq(pod.spec.containers[0].args, ["a", "b"], "the other container is untouched")

say("an element without its merge key: 500 with the strategicpatch package's text, nothing changed")
try:
    api.patch_namespaced_pod("smp-pod", NS, {"spec": {"containers": [{"image": "x"}]}})
    raise AssertionError("a container without a name was merged")
except client.ApiException as err:
    eq(err.status, 500, "status")
    eq(json.loads(err.body)["message"], "map: map[image:x] does not contain declared merge key: name", "message")
pod = api.read_namespaced_pod("smp-pod", NS)
eq([c.image for c in pod.spec.containers], ["nginx:1.27", "busybox:1.37"], "images after the refused patch")

finish()
