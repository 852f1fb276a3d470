"""The DynamicClient on a custom resource: a CRD created through the dynamic `apiextensions.k8s.io/v1`
resource and waited for until Established, its kind then discovered (after a discovery refresh, as a
client that just made a CRD must), created with a default filled in and an unknown field pruned, listed,
patched, refused by its schema (422 with the field's path), its status written through `/status`, and the
CRD deleted, which takes its objects with it.
"""

import json
import time

from kubernetes import dynamic
from kubernetes.dynamic.exceptions import ApiException, ResourceNotFoundError

from kubesim_check import connect, eq, finish, say

dc = dynamic.DynamicClient(connect())
crds = dc.resources.get(api_version="apiextensions.k8s.io/v1", kind="CustomResourceDefinition")
NS = "default"


def wait_for(what, probe, limit_s=10.0):
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        found = probe()
        if found:
            return found
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


say("a CRD is created and becomes Established")
crds.create(
    body={
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "databases.py.example.com"},
        "spec": {
            "group": "py.example.com",
            "scope": "Namespaced",
            "names": {"plural": "databases", "kind": "Database"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "subresources": {"status": {}},
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {
                                "spec": {
                                    "type": "object",
                                    "properties": {
                                        "engine": {"type": "string", "enum": ["postgres", "mysql"]},
                                        "replicas": {"type": "integer", "default": 1, "maximum": 5},
                                    },
                                },
                                "status": {"type": "object", "properties": {"phase": {"type": "string"}}},
                            },
                        }
                    },
                }
            ],
        },
    }
)


def established():
    crd = crds.get(name="databases.py.example.com").to_dict()
    conditions = {c["type"]: c["status"] for c in crd.get("status", {}).get("conditions") or []}
    return conditions.get("Established") == "True"


wait_for("Established", established)


def discovered():
    try:
        dc.resources.invalidate_cache()
        return dc.resources.get(api_version="py.example.com/v1", kind="Database")
    except ResourceNotFoundError:
        return None


databases = wait_for("the Database kind in discovery", discovered)
eq(databases.namespaced, True, "namespaced")

say("a Database is created: defaulted and pruned")
made = databases.create(
    namespace=NS,
    body={
        "apiVersion": "py.example.com/v1",
        "kind": "Database",
        "metadata": {"name": "orders"},
        "spec": {"engine": "postgres", "tier": "gold"},
    },
    query_params=[("fieldValidation", "Ignore")],
)
eq(made.spec.to_dict(), {"engine": "postgres", "replicas": 1}, "spec")
eq([d.metadata.name for d in databases.get(namespace=NS).items], ["orders"], "the list")

say("a patch past the schema's maximum: 422 with the field's path")
try:
    databases.patch(
        namespace=NS, name="orders", body={"spec": {"replicas": 9}}, content_type="application/merge-patch+json"
    )
    raise AssertionError("a patch past the maximum was taken")
except ApiException as err:
    eq(err.status, 422, "status")
    eq(
        json.loads(err.body)["message"],
        'Database.py.example.com "orders" is invalid: spec.replicas: Invalid value: 9: '
        "spec.replicas in body should be less than or equal to 5",
        "message",
    )

say("the status is written through /status")
databases.status.patch(
    namespace=NS, name="orders", body={"status": {"phase": "Ready"}}, content_type="application/merge-patch+json"
)
eq(databases.get(namespace=NS, name="orders").status.phase, "Ready", "phase")

say("deleting the CRD deletes the Database, then the CRD")
crds.delete(name="databases.py.example.com")


def gone():
    try:
        crds.get(name="databases.py.example.com")
        return False
    except ApiException as err:
        return err.status == 404


wait_for("the CRD to go", gone)
finish()
