"""python-gitlab against a running Hearth: system hooks.

Usage: python3 python_gitlab_hooks.py <url> <token> <sink_url>
Prints one line per check; exits non-zero on the first disagreement.
"""
import sys

import gitlab

url, token, sink = sys.argv[1:4]
gl = gitlab.Gitlab(url, private_token=token)


def check(name, ok, detail=""):
    print(("ok   " if ok else "FAIL ") + name + (": " + str(detail) if not ok else ""))
    if not ok:
        sys.exit(1)


hook = gl.hooks.create({"url": sink + "/py", "token": "py-secret", "push_events": True, "enable_ssl_verification": False})
check("gl.hooks.create", hook.url == sink + "/py" and hook.push_events is True and not hasattr(hook, "token"), hook.attributes)
got = gl.hooks.get(hook.id)
check("gl.hooks.get", got.id == hook.id and got.enable_ssl_verification is False, got.attributes)
check("gl.hooks.list", [h.id for h in gl.hooks.list(get_all=True)] == [hook.id])
test = hook.test() if hasattr(hook, "test") else gl.http_post(f"/hooks/{hook.id}")
check("hook test", test["event_name"] == "project_create" and test["path"] == "ruby", test)
gl.hooks.delete(hook.id)
check("gl.hooks.delete", gl.hooks.list(get_all=True) == [])
try:
    gl.hooks.get(hook.id)
    check("gl.hooks.get after delete", False)
except gitlab.exceptions.GitlabGetError as e:
    check("gl.hooks.get after delete", e.response_code == 404, e)
print("all ok")
