"""CoreV1Api on pods: create with kube's defaults, validation, field selectors, the update rules of a pod's
spec, the status subresource, and delete: an unscheduled pod goes at once, a scheduled one gracefully, and
both answers are the Pod itself (kube's pod registry returns the deleted object).
"""

from kubernetes import client

from kubesim_check import check, connect, eq, eq_later, expect_status, finish, raw, say

api = client.CoreV1Api(connect())
NS = "default"

# The ServiceAccount admission plugin wants the namespace's `default` account, which no controller makes here.
api.create_namespaced_service_account(NS, {"metadata": {"name": "default"}})

say("create pod web")
pod = api.create_namespaced_pod(
    NS,
    client.V1Pod(
        metadata=client.V1ObjectMeta(name="web", labels={"app": "web"}),
        spec=client.V1PodSpec(
            containers=[
                client.V1Container(name="main", image="nginx:1.27"),
                client.V1Container(name="side", image="busybox"),
            ]
        ),
    ),
)
eq(pod.spec.restart_policy, "Always", "restartPolicy default")
eq(pod.spec.dns_policy, "ClusterFirst", "dnsPolicy default")
eq(pod.spec.termination_grace_period_seconds, 30, "terminationGracePeriodSeconds default")
eq(pod.spec.scheduler_name, "default-scheduler", "schedulerName default")
eq(pod.spec.containers[0].image_pull_policy, "IfNotPresent", "imagePullPolicy of a tagged image")
eq(pod.spec.containers[1].image_pull_policy, "Always", "imagePullPolicy of an untagged image")
eq(pod.spec.containers[0].termination_message_path, "/dev/termination-log", "terminationMessagePath default")
eq(pod.status.phase, "Pending", "a new pod's phase")
eq(pod.status.qos_class, "BestEffort", "a pod without resources is BestEffort")

say("a pod without containers is invalid")
status = expect_status(api.create_namespaced_pod, 422, "Invalid", NS, {"metadata": {"name": "empty"}, "spec": {"containers": []}})
check(
    any(cause.get("field") == "spec.containers" for cause in status["details"]["causes"]),
    f"a cause names spec.containers: {status['details']['causes']}",
)

say("field selectors")
api.create_namespaced_pod(
    NS,
    {"metadata": {"name": "placed"}, "spec": {"nodeName": "node-1", "containers": [{"name": "c", "image": "busybox:1"}]}},
)
eq([p.metadata.name for p in api.list_namespaced_pod(NS, field_selector="metadata.name=web").items], ["web"], "by name")
eq(
    [p.metadata.name for p in api.list_namespaced_pod(NS, field_selector="spec.nodeName=node-1").items],
    ["placed"],
    "by node",
)
eq(
    sorted(p.metadata.name for p in api.list_namespaced_pod(NS, field_selector="status.phase=Pending").items),
    ["placed", "web"],
    "by phase",
)
expect_status(api.list_namespaced_pod, 400, "BadRequest", NS, field_selector="spec.hostname=x")

say("replace the image (allowed)")
pod.spec.containers[0].image = "nginx:1.28"
pod = api.replace_namespaced_pod("web", NS, pod)
eq(pod.spec.containers[0].image, "nginx:1.28", "the replaced image")

say("replace the restart policy (forbidden)")
pod.spec.restart_policy = "Never"
try:
    changed = api.replace_namespaced_pod("web", NS, pod)
    eq_later(changed.spec.restart_policy, "Always", "a pod update that changes spec.restartPolicy is refused (422)")
except client.ApiException as err:
    eq(err.status, 422, "a pod update that changes spec.restartPolicy")
    check("pod updates may not change fields other than" in err.body, f"the message names the rule: {err.body}")

say("the status subresource")
running = api.patch_namespaced_pod_status(
    "web", NS, {"status": {"phase": "Running", "podIP": "10.1.2.3"}}, _content_type="application/merge-patch+json"
)
eq(running.status.phase, "Running", "the status patch's phase")
eq(running.status.pod_ip, "10.1.2.3", "the status patch's podIP")
running.status.phase = "Failed"
running.metadata.labels["seen"] = "yes"
updated = api.replace_namespaced_pod("web", NS, running)
eq(updated.status.phase, "Running", "a main-resource update ignores status")
eq(updated.metadata.labels["seen"], "yes", "but keeps its metadata change")

say("delete the unscheduled pod")
deleted = raw(api.delete_namespaced_pod, "web", NS)
eq_later(deleted.get("kind"), "Pod", f"a pod's delete answers with the Pod (ReturnDeletedObject), not {deleted}")
expect_status(api.read_namespaced_pod, 404, "NotFound", "web", NS, message='pods "web" not found')

say("delete the scheduled pod: graceful")
deleted = raw(api.delete_namespaced_pod, "placed", NS)
eq(deleted.get("kind"), "Pod", f"a graceful delete answers with the Pod, not {deleted}")
eq(deleted["metadata"].get("deletionGracePeriodSeconds"), 30, "the grace period is the pod's")
check(deleted["metadata"].get("deletionTimestamp"), "a deletionTimestamp is set")
still = api.read_namespaced_pod("placed", NS)
check(still.metadata.deletion_timestamp is not None, "the pod stays until its kubelet confirms")
raw(api.delete_namespaced_pod, "placed", NS, grace_period_seconds=0)
expect_status(api.read_namespaced_pod, 404, "NotFound", "placed", NS)

finish()
