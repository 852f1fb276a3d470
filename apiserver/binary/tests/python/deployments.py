"""AppsV1Api on deployments: discovery of apps/v1, create with kube's defaults, validation of the selector,
read, list, replace (the generation follows the spec), merge patch, the scale subresource, the status
subresource, and delete.
"""

from kubernetes import client

from kubesim_check import check, connect, eq, expect_status, finish, say

api_client = connect()
apps = client.AppsV1Api(api_client)
NS = "default"

say("discover apps/v1")
try:
    resources = apps.get_api_resources()
except client.ApiException as err:
    raise AssertionError(
        f"apps/v1 is not served: GET /apis/apps/v1 answered {err.status} {err.reason}; this script needs"
        " apps/v1 deployments with their scale and status subresources"
    ) from None
names = {r.name for r in resources.resources}
check({"deployments", "deployments/scale", "deployments/status"} <= names, f"apps/v1 lists deployments: {names}")


def deployment(name, replicas=None, labels=None):
    """A deployment of one nginx container whose selector matches its template's labels."""
    labels = labels or {"app": name}
    return client.V1Deployment(
        metadata=client.V1ObjectMeta(name=name),
        spec=client.V1DeploymentSpec(
            replicas=replicas,
            selector=client.V1LabelSelector(match_labels={"app": name}),
            template=client.V1PodTemplateSpec(
                metadata=client.V1ObjectMeta(labels=labels),
                spec=client.V1PodSpec(containers=[client.V1Container(name="web", image="nginx:1.27")]),
            ),
        ),
    )


say("create deployment web")
created = apps.create_namespaced_deployment(NS, deployment("web"))
eq(created.spec.replicas, 1, "replicas default")
eq(created.spec.strategy.type, "RollingUpdate", "strategy default")
eq(created.spec.strategy.rolling_update.max_surge, "25%", "maxSurge default")
eq(created.spec.strategy.rolling_update.max_unavailable, "25%", "maxUnavailable default")
eq(created.spec.revision_history_limit, 10, "revisionHistoryLimit default")
eq(created.spec.progress_deadline_seconds, 600, "progressDeadlineSeconds default")
eq(created.spec.template.spec.restart_policy, "Always", "the template's pod defaults")
eq(created.metadata.generation, 1, "a new deployment's generation")

say("a selector that does not match the template is invalid")
status = expect_status(
    apps.create_namespaced_deployment, 422, "Invalid", NS, deployment("bad", labels={"app": "other"})
)
check(
    "`selector` does not match template `labels`" in status["message"],
    f"the message names the mismatch: {status['message']}",
)

say("read and list")
got = apps.read_namespaced_deployment("web", NS)
eq(got.metadata.uid, created.metadata.uid, "the read uid")
eq([d.metadata.name for d in apps.list_namespaced_deployment(NS).items], ["web"], "the listed deployments")

say("replace: replicas 3")
got.spec.replicas = 3
replaced = apps.replace_namespaced_deployment("web", NS, got)
eq(replaced.spec.replicas, 3, "the replaced replicas")
eq(replaced.metadata.generation, 2, "a spec change bumps the generation")

say("the selector is immutable")
replaced.spec.selector = client.V1LabelSelector(match_labels={"app": "web", "extra": "x"})
replaced.spec.template.metadata.labels = {"app": "web", "extra": "x"}
status = expect_status(apps.replace_namespaced_deployment, 422, "Invalid", "web", NS, replaced)
check("field is immutable" in status["message"], f"the message says immutable: {status['message']}")

say("merge patch: a template annotation")
patched = apps.patch_namespaced_deployment(
    "web",
    NS,
    {"spec": {"template": {"metadata": {"annotations": {"restarted": "now"}}}}},
    _content_type="application/merge-patch+json",
)
eq(patched.spec.template.metadata.annotations, {"restarted": "now"}, "the patched template annotation")
eq(patched.metadata.generation, 3, "the template change bumps the generation")

say("the scale subresource")
scale = apps.read_namespaced_deployment_scale("web", NS)
eq(scale.kind, "Scale", "the scale's kind")
eq(scale.spec.replicas, 3, "the scale's replicas")
eq(scale.status.selector, "app=web", "the scale's selector")
scale.spec.replicas = 5
scaled = apps.replace_namespaced_deployment_scale("web", NS, scale)
eq(scaled.spec.replicas, 5, "the replaced scale")
eq(apps.read_namespaced_deployment("web", NS).spec.replicas, 5, "the deployment follows its scale")
apps.patch_namespaced_deployment_scale(
    "web", NS, {"spec": {"replicas": 2}}, _content_type="application/merge-patch+json"
)
eq(apps.read_namespaced_deployment("web", NS).spec.replicas, 2, "the deployment follows a scale patch")

say("the status subresource")
current = apps.read_namespaced_deployment("web", NS)
current.status = client.V1DeploymentStatus(replicas=2, ready_replicas=1, observed_generation=current.metadata.generation)
with_status = apps.replace_namespaced_deployment_status("web", NS, current)
eq(with_status.status.ready_replicas, 1, "the written status")
eq(with_status.metadata.generation, current.metadata.generation, "a status write keeps the generation")

say("delete it")
apps.delete_namespaced_deployment("web", NS)
expect_status(
    apps.read_namespaced_deployment,
    404,
    "NotFound",
    "web",
    NS,
    message='deployments.apps "web" not found',
)

finish()
