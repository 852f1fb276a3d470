"""List paging with `limit` and `_continue`: pages in name order, remainingItemCount, one snapshot across
pages (a write between pages is not seen, and every page carries the first page's resourceVersion), and
kube-apiserver's refusals of a bad continue token and of a continue together with a resourceVersion.
"""

from kubernetes import client

from kubesim_check import check, connect, eq, expect_status, finish, say

api = client.CoreV1Api(connect())
NS = "paging"

api.create_namespace({"metadata": {"name": NS}})
names = [f"cm-{i:02}" for i in range(7)]
for name in reversed(names):
    api.create_namespaced_config_map(NS, {"metadata": {"name": name, "labels": {"set": "a"}}})

say("page 1: limit 3")
first = api.list_namespaced_config_map(NS, limit=3)
eq([cm.metadata.name for cm in first.items], names[:3], "the first page")
check(first.metadata._continue, "the first page has a continue token")
eq(first.metadata.remaining_item_count, 4, "remainingItemCount after the first page")
snapshot = first.metadata.resource_version

say("a write between pages")
api.create_namespaced_config_map(NS, {"metadata": {"name": "cm-99"}})
api.delete_namespaced_config_map("cm-05", NS)

say("page 2")
second = api.list_namespaced_config_map(NS, limit=3, _continue=first.metadata._continue)
eq([cm.metadata.name for cm in second.items], names[3:6], "the second page (from the first page's snapshot)")
eq(second.metadata.resource_version, snapshot, "the second page's resourceVersion")
eq(second.metadata.remaining_item_count, 1, "remainingItemCount after the second page")

say("page 3")
third = api.list_namespaced_config_map(NS, limit=3, _continue=second.metadata._continue)
eq([cm.metadata.name for cm in third.items], names[6:], "the last page")
check(not third.metadata._continue, f"the last page has no continue token: {third.metadata._continue!r}")
check(third.metadata.remaining_item_count is None, "the last page has no remainingItemCount")

say("a fresh list sees the writes")
fresh = [cm.metadata.name for cm in api.list_namespaced_config_map(NS).items]
eq(fresh, [n for n in names if n != "cm-05"] + ["cm-99"], "the fresh list")

say("paging with a label selector")
pages, token = [], None
while True:
    page = api.list_namespaced_config_map(NS, label_selector="set=a", limit=2, _continue=token)
    pages.append([cm.metadata.name for cm in page.items])
    token = page.metadata._continue
    if not token:
        break
eq(sum(pages, []), [n for n in names if n != "cm-05"], "every labelled configmap once, in order")
check(all(len(p) <= 2 for p in pages), f"no page exceeds the limit: {pages}")

say("paging across namespaces")
across, token = [], None
while True:
    page = api.list_config_map_for_all_namespaces(limit=4, _continue=token)
    across += [(cm.metadata.namespace, cm.metadata.name) for cm in page.items]
    token = page.metadata._continue
    if not token:
        break
eq(len(across), len(set(across)), "no configmap twice")
check({(NS, n) for n in fresh} <= set(across), "every configmap of the namespace")

say("a bad continue token")
expect_status(api.list_namespaced_config_map, 400, "BadRequest", NS, limit=3, _continue="not-a-token")

say("continue with a resourceVersion")
expect_status(
    api.list_namespaced_config_map,
    400,
    "BadRequest",
    NS,
    limit=3,
    _continue=first.metadata._continue,
    resource_version=snapshot,
    message="specifying resource version is not allowed when using continue",
)

finish()
