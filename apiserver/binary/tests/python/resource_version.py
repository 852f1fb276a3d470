"""resourceVersion semantics through the client: optimistic concurrency (a stale replace, a stale patch and
stale delete preconditions answer 409; a replace without a resourceVersion is unconditional), and reads
at a resourceVersion (`0` from the cache, `Exact` for history, a version from the future answering 504).
"""

from kubernetes import client

from kubesim_check import check, connect, eq, eq_later, expect_status, finish, say

api = client.CoreV1Api(connect())
NS = "default"

say("create and replace with the current resourceVersion")
first = api.create_namespaced_config_map(NS, {"metadata": {"name": "cas"}, "data": {"v": "1"}})
first.data["v"] = "2"
second = api.replace_namespaced_config_map("cas", NS, first)
check(second.metadata.resource_version != first.metadata.resource_version, "the replace moved the resourceVersion")

say("replace with the stale resourceVersion")
first.data["v"] = "stale"
conflict = expect_status(
    api.replace_namespaced_config_map,
    409,
    "Conflict",
    "cas",
    NS,
    first,
    message='Operation cannot be fulfilled on configmaps "cas": the object has been modified; please apply your'
    " changes to the latest version and try again",
)
# kube-apiserver's StatusDetails omits an empty group (`json:"group,omitempty"`): a core resource's
# details name no group at all.
eq_later(conflict["details"], {"name": "cas", "kind": "configmaps"}, "the conflict's details")
eq(api.read_namespaced_config_map("cas", NS).data, {"v": "2"}, "the stale replace changed nothing")

say("a merge patch carrying the stale resourceVersion")
expect_status(
    api.patch_namespaced_config_map,
    409,
    "Conflict",
    "cas",
    NS,
    {"metadata": {"resourceVersion": first.metadata.resource_version}, "data": {"v": "patched"}},
    _content_type="application/merge-patch+json",
)

say("replace without a resourceVersion: unconditional")
blind = client.V1ConfigMap(metadata=client.V1ObjectMeta(name="cas"), data={"v": "3"})
third = api.replace_namespaced_config_map("cas", NS, blind)
eq(third.data, {"v": "3"}, "the unconditional replace's data")

say("delete with stale preconditions")
# kube-apiserver checks delete preconditions early (rest.BeforeDelete) and names the object by its kind
# there, not by its resource.
stale_rv = second.metadata.resource_version
status = expect_status(
    api.delete_namespaced_config_map,
    409,
    "Conflict",
    "cas",
    NS,
    body=client.V1DeleteOptions(preconditions=client.V1Preconditions(resource_version=stale_rv)),
)
eq_later(
    status["message"],
    f'Operation cannot be fulfilled on ConfigMap "cas": the ResourceVersion in the precondition ({stale_rv}) does'
    f" not match the ResourceVersion in record ({third.metadata.resource_version}). The object might have been"
    " modified",
    "a stale resourceVersion precondition's message",
)
wrong_uid = "00000000-0000-0000-0000-000000000000"
status = expect_status(
    api.delete_namespaced_config_map,
    409,
    "Conflict",
    "cas",
    NS,
    body=client.V1DeleteOptions(preconditions=client.V1Preconditions(uid=wrong_uid)),
)
eq_later(
    status["message"],
    f'Operation cannot be fulfilled on ConfigMap "cas": the UID in the precondition ({wrong_uid}) does not match'
    f" the UID in record ({first.metadata.uid}). The object might have been deleted and then recreated",
    "a wrong uid precondition's message",
)
eq(api.read_namespaced_config_map("cas", NS).data, {"v": "3"}, "the refused deletes changed nothing")

say("reads at a resourceVersion")
# A list at 0 is served from the watch cache, which may trail the latest write by a moment.
any_version = api.list_namespaced_config_map(NS, resource_version="0", field_selector="metadata.name=cas")
eq([cm.metadata.uid for cm in any_version.items], [first.metadata.uid], "a list at 0 (any version)")
at_second = api.list_namespaced_config_map(
    NS, resource_version=second.metadata.resource_version, resource_version_match="Exact"
)
eq(at_second.metadata.resource_version, second.metadata.resource_version, "an Exact list's resourceVersion")
eq([cm.data for cm in at_second.items if cm.metadata.name == "cas"], [{"v": "2"}], "an Exact list sees history")
newer = api.list_namespaced_config_map(
    NS, resource_version=second.metadata.resource_version, resource_version_match="NotOlderThan"
)
check(int(newer.metadata.resource_version) >= int(third.metadata.resource_version), "NotOlderThan is fresh enough")
expect_status(
    api.list_namespaced_config_map,
    422,
    "Invalid",
    NS,
    resource_version_match="Exact",
    message='ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is'
    " forbidden unless resourceVersion is provided",
)

say("a resourceVersion from the future")
future = str(int(third.metadata.resource_version) + 1000)
status = expect_status(
    api.list_namespaced_config_map,
    504,
    "Timeout",
    NS,
    resource_version=future,
    resource_version_match="NotOlderThan",
    _request_timeout=15,
)
check(
    status["message"].startswith(f"Timeout: Too large resource version: {future}, current: "),
    f"the message: {status['message']}",
)
eq([c.get("reason") for c in status["details"].get("causes", [])], ["ResourceVersionTooLarge"], "the cause")
eq(status["details"].get("retryAfterSeconds"), 1, "the Timeout's retryAfterSeconds")

finish()
