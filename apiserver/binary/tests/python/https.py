"""The kubeconfig the binary writes when it serves HTTPS (the certificate chain as certificate-authority-data,
and the server's admin token), loaded as is: the client verifies the server's certificate for 127.0.0.1, then reads, writes
and watches through it.
"""

import time

from kubernetes import client, watch

from kubesim_check import check, connect, eq, finish, say

api_client = connect()
configuration = api_client.configuration
check(configuration.host.startswith("https://"), f"the kubeconfig's server: {configuration.host}")
check(configuration.verify_ssl, "the client verifies the server's certificate")
check(configuration.ssl_ca_cert, "the client trusts the kubeconfig's certificate-authority-data")
check(configuration.api_key.get("BearerToken", "").startswith("Bearer "), "the kubeconfig's admin token")
api = client.CoreV1Api(api_client)
me = client.AuthenticationV1Api(api_client).create_self_subject_review({"metadata": {}})
eq(me.status.user_info.username, "kubesim-admin", "who the kubeconfig's token is")
eq(me.status.user_info.groups, ["system:masters", "system:authenticated"], "the admin's groups")

say("wait for the server's bootstrap over HTTPS")
deadline = time.monotonic() + 20
while True:
    try:
        eq(api.read_namespace("default").status.phase, "Active", "default's phase")
        break
    except client.ApiException as err:
        check(time.monotonic() < deadline, f"default never appeared: {err.status}")
        time.sleep(0.05)

say("write, read and watch over HTTPS")
start = api.list_namespaced_config_map("default").metadata.resource_version
created = api.create_namespaced_config_map("default", {"metadata": {"name": "tls"}, "data": {"v": "1"}})
eq(api.read_namespaced_config_map("tls", "default").data, {"v": "1"}, "the read data")
w = watch.Watch()
for event in w.stream(api.list_namespaced_config_map, "default", resource_version=start, timeout_seconds=10):
    eq((event["type"], event["object"].metadata.uid), ("ADDED", created.metadata.uid), "the watched create")
    w.stop()

finish()
