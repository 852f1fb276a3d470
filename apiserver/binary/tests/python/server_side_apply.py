"""`DynamicClient.server_side_apply`: a Deployment applied by one manager (created, with its containers
owned by name), a second manager's apply of a field the first owns refused with a 409 that names it,
`force_conflicts` moving the field, and an apply without a field manager refused (422).
"""

import json

from kubernetes import dynamic
from kubernetes.dynamic.exceptions import ApiException, ConflictError

from kubesim_check import connect, eq, finish, say

dc = dynamic.DynamicClient(connect())
deployments = dc.resources.get(api_version="apps/v1", kind="Deployment")
NS = "default"


def deployment(image, replicas):
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "ssa", "namespace": NS},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "ssa"}},
            "template": {
                "metadata": {"labels": {"app": "ssa"}},
                "spec": {"containers": [{"name": "main", "image": image}]},
            },
        },
    }


say("an apply creates, and its manager owns each container by name")
made = deployments.server_side_apply(body=deployment("nginx:1.27", 2), field_manager="deployer")
entry = made.to_dict()["metadata"]["managedFields"][0]
eq((entry["manager"], entry["operation"]), ("deployer", "Apply"), "the entry")
containers = entry["fieldsV1"]["f:spec"]["f:template"]["f:spec"]["f:containers"]
eq(sorted(containers.keys()), ['k:{"name":"main"}'], "containers are owned by name")

say("another manager's apply of the image: 409 naming the field")
try:
    deployments.server_side_apply(body=deployment("nginx:1.28", 2), field_manager="upgrader")
    raise AssertionError("the conflicting apply was taken")
except ConflictError as err:
    status = json.loads(err.body)
    eq(status["reason"], "Conflict", "reason")
    eq(
        status["message"],
        'Apply failed with 1 conflict: conflict with "deployer": .spec.template.spec.containers[name="main"].image',
        "message",
    )
eq(deployments.get(name="ssa", namespace=NS).spec.template.spec.containers[0].image, "nginx:1.27", "image kept")

say("force_conflicts moves the image to the second manager")
forced = deployments.server_side_apply(
    body=deployment("nginx:1.28", 2), field_manager="upgrader", force_conflicts=True
)
eq(forced.spec.template.spec.containers[0].image, "nginx:1.28", "image")
owners = {m["manager"]: m["fieldsV1"] for m in forced.to_dict()["metadata"]["managedFields"]}
upgrader = owners["upgrader"]["f:spec"]["f:template"]["f:spec"]["f:containers"]['k:{"name":"main"}']
eq("f:image" in upgrader, True, "the upgrader owns the image")
deployer = owners["deployer"]["f:spec"]["f:template"]["f:spec"]["f:containers"]['k:{"name":"main"}']
eq("f:image" in deployer, False, "the deployer no longer does")

say("an apply without a field manager: 422")
try:
    deployments.server_side_apply(body=deployment("nginx:1.29", 2))
    raise AssertionError("an apply without a field manager was taken")
except ApiException as err:
    eq(err.status, 422, "status")
    eq(
        json.loads(err.body)["message"],
        'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch',
        "message",
    )

finish()
