"""`watch.Watch().stream(...)`: the events of changes made while the watch runs (ADDED, MODIFIED, DELETED with
the resourceVersions the writes answered), the synthetic ADDED events of a watch without a resourceVersion,
a label-selected watch seeing objects enter and leave its selection, and `timeout_seconds` ending a quiet
watch.
"""

import threading
import time

from kubernetes import client, watch

from kubesim_check import check, connect, eq, finish, say

api = client.CoreV1Api(connect())
NS = "default"
# Every stream has a server-side timeout, so that a missing event fails the script instead of hanging it.
LIMIT = 20


def in_background(steps):
    """Runs `steps` (a function) on a thread after a short pause; returns the thread and its results."""
    results = {}

    def run():
        time.sleep(0.3)
        try:
            steps(results)
        except Exception as err:  # The main thread reports it.
            results["error"] = err

    thread = threading.Thread(target=run)
    thread.start()
    return thread, results


def events_until(stream, w, last):
    """The (type, name, object) of every event until one satisfies `last`, then stops the watch."""
    seen = []
    for event in stream:
        obj = event["object"]
        seen.append((event["type"], obj.metadata.name, obj))
        say("  event", event["type"], obj.metadata.name, "rv", obj.metadata.resource_version)
        if last(event):
            w.stop()
    return seen


say("watch from a list's resourceVersion while a thread creates, updates and deletes")
start = api.list_namespaced_config_map(NS).metadata.resource_version


def changes(results):
    created = api.create_namespaced_config_map(NS, {"metadata": {"name": "watched"}, "data": {"step": "1"}})
    results["created"] = created.metadata.resource_version
    created.data["step"] = "2"
    results["replaced"] = api.replace_namespaced_config_map("watched", NS, created).metadata.resource_version
    api.delete_namespaced_config_map("watched", NS)


thread, results = in_background(changes)
w = watch.Watch()
seen = events_until(
    w.stream(api.list_namespaced_config_map, NS, resource_version=start, timeout_seconds=LIMIT),
    w,
    lambda e: e["type"] == "DELETED",
)
thread.join()
check("error" not in results, f"the writer failed: {results.get('error')}")
eq([(kind, name) for kind, name, _ in seen], [("ADDED", "watched"), ("MODIFIED", "watched"), ("DELETED", "watched")], "events")
eq(seen[0][2].metadata.resource_version, results["created"], "ADDED carries the create's resourceVersion")
eq(seen[1][2].metadata.resource_version, results["replaced"], "MODIFIED carries the replace's resourceVersion")
eq(seen[1][2].data, {"step": "2"}, "MODIFIED carries the new data")
eq(seen[2][2].data, {"step": "2"}, "DELETED carries the last state")
# resourceVersions are opaque to clients; kube-apiserver's (etcd revisions) grow, and the deleted object
# carries the revision of its deletion.
check(int(seen[2][2].metadata.resource_version) > int(results["replaced"]), "DELETED carries the deletion's revision")
eq(w.resource_version, seen[2][2].metadata.resource_version, "the Watch remembers the last resourceVersion")

say("watch without a resourceVersion: the current state first")
api.create_namespace({"metadata": {"name": "watch-b"}})
for name in ("one", "two"):
    api.create_namespaced_config_map("watch-b", {"metadata": {"name": name}})
thread, results = in_background(
    lambda r: api.create_namespaced_config_map("watch-b", {"metadata": {"name": "three"}})
)
w = watch.Watch()
seen = events_until(
    w.stream(api.list_namespaced_config_map, "watch-b", timeout_seconds=LIMIT),
    w,
    lambda e: e["object"].metadata.name == "three",
)
thread.join()
eq(sorted(name for _, name, _ in seen[:2]), ["one", "two"], "the existing objects come first")
eq([kind for kind, _, _ in seen], ["ADDED"] * 3, "all ADDED")
eq(seen[2][1], "three", "then the new one")

say("a label-selected watch: objects enter and leave the selection")
start = api.list_namespaced_config_map(NS).metadata.resource_version


def relabel(results):
    api.create_namespaced_config_map(NS, {"metadata": {"name": "x"}})
    merge = "application/merge-patch+json"
    api.patch_namespaced_config_map("x", NS, {"metadata": {"labels": {"app": "w"}}}, _content_type=merge)
    api.patch_namespaced_config_map("x", NS, {"data": {"k": "v"}}, _content_type=merge)
    left = api.patch_namespaced_config_map("x", NS, {"metadata": {"labels": {"app": None}}}, _content_type=merge)
    results["left"] = left.metadata.resource_version
    api.create_namespaced_config_map(NS, {"metadata": {"name": "y", "labels": {"app": "w"}}})


thread, results = in_background(relabel)
w = watch.Watch()
seen = events_until(
    w.stream(api.list_namespaced_config_map, NS, label_selector="app=w", resource_version=start, timeout_seconds=LIMIT),
    w,
    lambda e: e["object"].metadata.name == "y",
)
thread.join()
check("error" not in results, f"the writer failed: {results.get('error')}")
eq(
    [(kind, name) for kind, name, _ in seen],
    [("ADDED", "x"), ("MODIFIED", "x"), ("DELETED", "x"), ("ADDED", "y")],
    "a selected watch's events",
)
# kube's watch filter sends the object that left the selection in its last selected state, stamped with
# the resourceVersion of the change that moved it out.
eq(seen[2][2].metadata.labels, {"app": "w"}, "the object that left the selection, in its previous state")
eq(seen[2][2].metadata.resource_version, results["left"], "stamped with the leaving change's resourceVersion")

say("timeout_seconds ends a quiet watch")
began = time.monotonic()
quiet = list(watch.Watch().stream(api.list_namespaced_config_map, "watch-b", resource_version=start, timeout_seconds=1))
took = time.monotonic() - began
eq([e["type"] for e in quiet], [], "no events in the quiet namespace")
check(took < 5, f"the watch ended by itself after {took:.1f}s")

finish()
