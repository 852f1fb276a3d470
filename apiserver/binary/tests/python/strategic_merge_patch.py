"""A dict body to a patch call: the client sends it as a strategic merge patch
(`application/strategic-merge-patch+json`), which kube-apiserver applies to built-in kinds (maps merge,
`null` deletes a key, lists with a patch merge key merge by that key).

kubesim does not serve strategic merge patch yet (issue 14): this script pins what it answers today, a
415 UnsupportedMediaType that lists the patch types it serves, and that the object is unchanged. When
strategic merge patch lands this script fails, and becomes the check of kube-apiserver's behaviour:
`data == {"k": "v", "k2": "v2"}`, `labels == {"b": "2"}`, and a pod's containers merged by name.
"""

import json

from kubernetes import client

from kubesim_check import connect, eq, finish, say

api = client.CoreV1Api(connect())
NS = "default"

api.create_namespaced_config_map(NS, {"metadata": {"name": "smp", "labels": {"a": "1"}}, "data": {"k": "v"}})

say("strategic merge patch of a configmap: 415 until kubesim serves it")
try:
    api.patch_namespaced_config_map("smp", NS, {"metadata": {"labels": {"a": None, "b": "2"}}, "data": {"k2": "v2"}})
    raise AssertionError("kubesim now applies strategic merge patches: make this script check kube-apiserver's result")
except client.ApiException as err:
    eq(err.status, 415, "status")
    eq(
        json.loads(err.body)["message"],
        "the body of the request was in an unknown format - accepted media types include:"
        " application/json-patch+json, application/merge-patch+json",
        "message",
    )

say("the refused patch changed nothing")
cm = api.read_namespaced_config_map("smp", NS)
eq(cm.data, {"k": "v"}, "data")
eq(cm.metadata.labels, {"a": "1"}, "labels")

finish()
