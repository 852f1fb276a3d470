"""CoreV1Api on namespaces: the namespaces the server bootstraps, create (with the `kubernetes` finalizer and
the name label), read, list by label, replace, patch, and delete, which leaves the namespace Terminating
(finalizing it is the namespace controller's job, and the binary runs no controller manager) and closes it
to new content.
"""

from kubernetes import client

from kubesim_check import check, connect, eq, expect_status, finish, say

api = client.CoreV1Api(connect())

say("the bootstrapped namespaces")
names = {ns.metadata.name for ns in api.list_namespace().items}
check({"default", "kube-system", "kube-public"} <= names, f"default, kube-system and kube-public exist: {names}")
eq(api.read_namespace("default").status.phase, "Active", "default's phase")

say("create namespace team-a")
created = api.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name="team-a", labels={"team": "a"})))
eq(created.status.phase, "Active", "a new namespace's phase")
eq(created.spec.finalizers, ["kubernetes"], "a new namespace's finalizers")
eq(
    created.metadata.labels,
    {"team": "a", "kubernetes.io/metadata.name": "team-a"},
    "a new namespace's labels (the name label is added)",
)
expect_status(
    api.create_namespace,
    409,
    "AlreadyExists",
    {"metadata": {"name": "team-a"}},
    message='namespaces "team-a" already exists',
)

say("list namespaces by label")
listed = api.list_namespace(label_selector="kubernetes.io/metadata.name=team-a")
eq([ns.metadata.name for ns in listed.items], ["team-a"], "the namespace selected by its name label")

say("replace and patch it")
created.metadata.annotations = {"owner": "alice"}
replaced = api.replace_namespace("team-a", created)
eq(replaced.metadata.annotations, {"owner": "alice"}, "the replaced annotations")
patched = api.patch_namespace(
    "team-a", {"metadata": {"labels": {"env": "dev"}}}, _content_type="application/merge-patch+json"
)
eq(patched.metadata.labels["env"], "dev", "the merge-patched label")
eq(patched.metadata.labels["kubernetes.io/metadata.name"], "team-a", "the name label stays")

say("put content in it")
api.create_namespaced_config_map("team-a", {"metadata": {"name": "inside"}})

say("delete it")
# The generated client types this answer as an untyped object: kube-apiserver returns the namespace itself,
# now Terminating, because deleting a namespace with finalizers is an update.
answer = api.delete_namespace("team-a")
answer = answer if isinstance(answer, dict) else answer.to_dict()
eq(answer["kind"], "Namespace", "the delete's answer kind")
eq(answer["status"]["phase"], "Terminating", "the delete's answer phase")
check(answer["metadata"].get("deletionTimestamp"), "the delete's answer has a deletionTimestamp")

terminating = api.read_namespace("team-a")
eq(terminating.status.phase, "Terminating", "the phase after delete")
check(terminating.metadata.deletion_timestamp is not None, "deletionTimestamp is set")
eq(terminating.spec.finalizers, ["kubernetes"], "the finalizer waits for the namespace controller")

say("no new content in a terminating namespace")
expect_status(
    api.create_namespaced_config_map,
    403,
    "Forbidden",
    "team-a",
    {"metadata": {"name": "late"}},
    message='configmaps "late" is forbidden: unable to create new content in namespace team-a because it is being terminated',
)
eq(api.read_namespaced_config_map("inside", "team-a").metadata.name, "inside", "existing content stays readable")

say("the system namespaces cannot be deleted")
expect_status(
    api.delete_namespace,
    403,
    "Forbidden",
    "default",
    message='namespaces "default" is forbidden: this namespace may not be deleted',
)

finish()
