"""Helpers that the Python client scripts share.

Each script is run by tests/python_client.rs as `python SCRIPT KUBECONFIG` against a fresh kubesim-apiserver.
It loads the kubeconfig the binary wrote, as is, prints a compact transcript of what it did and what the
server answered, and stops at the first assertion that fails (the Rust test then fails with the transcript).
The expectations are kube-apiserver's answers, not whatever kubesim happens to answer.
"""

import json
import sys

from kubernetes import client, config


def connect():
    """Loads the kubeconfig named on the command line exactly as a user would, and returns its ApiClient."""
    if len(sys.argv) != 2:
        raise SystemExit(f"usage: {sys.argv[0]} KUBECONFIG")
    config.load_kube_config(config_file=sys.argv[1])
    return client.ApiClient()


def say(*parts):
    """Prints one transcript line."""
    print(" ".join(str(p) for p in parts), flush=True)


def check(condition, what):
    """Fails the script with `what` unless `condition` holds."""
    if not condition:
        raise AssertionError(what)


def eq(got, want, what):
    """Fails the script unless `got == want`, showing both."""
    if got != want:
        raise AssertionError(f"{what}: got {got!r}, want {want!r}")


# Differences in wording and other details, collected by `eq_later` and reported together by `finish`, so
# that one of them does not hide the checks of behaviour after it.
_later = []


def eq_later(got, want, what):
    """Like `eq`, but a difference fails the script only at `finish`, after every other check has run."""
    if got != want:
        say("  !! differs from kube-apiserver:", what)
        _later.append(f"{what}: got {got!r}, want {want!r}")


def api_error(call, *args, **kwargs):
    """Runs `call`, which must fail with an ApiException; returns the exception and its decoded Status body."""
    try:
        result = call(*args, **kwargs)
    except client.ApiException as err:
        try:
            status = json.loads(err.body) if err.body else {}
        except ValueError:
            status = {"unparsed": err.body}
        say("  ->", err.status, status.get("reason", ""), repr(status.get("message", "")))
        return err, status
    raise AssertionError(f"{call.__name__} succeeded where kube-apiserver fails: {result!r}"[:2000])


def expect_status(call, code, reason, *args, message=None, **kwargs):
    """Runs `call`, which must fail with HTTP `code` and a Status of `reason` (and `message` when given)."""
    err, status = api_error(call, *args, **kwargs)
    eq(err.status, code, f"{call.__name__}: HTTP status")
    eq(status.get("kind"), "Status", f"{call.__name__}: the error body's kind")
    eq(status.get("code"), code, f"{call.__name__}: the Status's code")
    eq(status.get("reason"), reason, f"{call.__name__}: the Status's reason")
    if message is not None:
        eq(status.get("message"), message, f"{call.__name__}: the Status's message")
    return status


def raw(call, *args, **kwargs):
    """Runs `call` without the client's decoding into models; the response body as JSON."""
    response = call(*args, _preload_content=False, **kwargs)
    return json.loads(response.data)


def finish():
    """The last line of every script that ran to its end; fails it if `eq_later` found differences."""
    if _later:
        raise AssertionError("differences from kube-apiserver:\n  " + "\n  ".join(_later))
    say("ok")
