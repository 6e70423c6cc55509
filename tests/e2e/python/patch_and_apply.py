"""The Python client's patch and apply calls against Keelson.

Run by tests/e2e/python.rs with KUBECONFIG set; prints one JSON document
with what the client got back, which the Rust test asserts on.
"""
import json
import sys

from kubernetes import client, config
from kubernetes.dynamic import DynamicClient

config.load_kube_config()
api = client.ApiClient()
core = client.CoreV1Api(api)
apps = client.AppsV1Api(api)
ns = "default"
out = {}

core.create_namespaced_config_map(
    ns, {"metadata": {"name": "py-cm"}, "data": {"a": "1"}}, field_manager="py-create"
)
# A dict body is sent as a strategic merge patch.
cm = core.patch_namespaced_config_map("py-cm", ns, {"data": {"b": "2"}})
out["cm_data"] = cm.data

apps.create_namespaced_deployment(
    ns,
    {
        "metadata": {"name": "py-web", "labels": {"app": "py-web"}},
        "spec": {
            "selector": {"matchLabels": {"app": "py-web"}},
            "template": {
                "metadata": {"labels": {"app": "py-web"}},
                "spec": {"containers": [
                    {"name": "a", "image": "nginx:1"},
                    {"name": "b", "image": "busybox:1"},
                ]},
            },
        },
    },
)
d = apps.patch_namespaced_deployment(
    "py-web", ns,
    {"spec": {"template": {"spec": {"containers": [{"name": "b", "image": "busybox:2"}]}}}},
)
out["containers"] = [[c.name, c.image] for c in d.spec.template.spec.containers]

# A list body is sent as a JSON patch.
d = apps.patch_namespaced_deployment(
    "py-web", ns, [{"op": "replace", "path": "/spec/replicas", "value": 3}]
)
out["replicas"] = d.spec.replicas

# Server-side apply through the dynamic client.
dyn = DynamicClient(api)
svc = dyn.resources.get(api_version="v1", kind="Service")
applied = dyn.server_side_apply(
    svc,
    body={
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "py-svc", "namespace": ns},
        "spec": {"ports": [{"name": "http", "port": 80}], "selector": {"app": "py-web"}},
    },
    field_manager="python-client",
)
out["svc_managers"] = [
    [e["manager"], e["operation"]] for e in applied["metadata"]["managedFields"]
]
out["svc_ports"] = [p["port"] for p in applied["spec"]["ports"]]

# A conflicting apply from another manager is a 409 with kube's message.
try:
    dyn.server_side_apply(
        svc,
        body={
            "apiVersion": "v1", "kind": "Service",
            "metadata": {"name": "py-svc", "namespace": ns},
            "spec": {"selector": {"app": "other"}},
        },
        field_manager="intruder",
    )
    out["conflict"] = None
except Exception as e:  # the dynamic client raises ConflictError
    out["conflict"] = [getattr(e, "status", None), json.loads(e.body)["message"]]

json.dump(out, sys.stdout)
