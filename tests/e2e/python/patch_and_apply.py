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

# Deletes with propagationPolicy: a Deployment owning a ReplicaSet (made
# by hand, with ownerReferences), deleted in the foreground, then an owner
# ConfigMap deleted with Orphan, whose dependent stays without its reference.
import time

dep = apps.read_namespaced_deployment("py-web", ns)
apps.create_namespaced_replica_set(
    ns,
    {
        "metadata": {
            "name": "py-web-rs",
            "labels": {"app": "py-web"},
            "ownerReferences": [{
                "apiVersion": "apps/v1", "kind": "Deployment", "name": "py-web",
                "uid": dep.metadata.uid, "controller": True, "blockOwnerDeletion": True,
            }],
        },
        "spec": {
            "selector": {"matchLabels": {"app": "py-web"}},
            "template": {
                "metadata": {"labels": {"app": "py-web"}},
                "spec": {"containers": [{"name": "a", "image": "nginx:1"}]},
            },
        },
    },
)
status = apps.delete_namespaced_deployment(
    "py-web", ns, body=client.V1DeleteOptions(propagation_policy="Foreground")
)
# The client types the answer as V1Status; kube answers the Deployment
# being deleted, which the client hands back as a dict.
if isinstance(status, dict):
    out["foreground_answer"] = [
        status.get("kind"), sorted(status.get("metadata", {}).get("finalizers") or [])
    ]
else:
    out["foreground_answer"] = [status.kind, sorted(status.metadata.finalizers or [])]


def gone(read):
    for _ in range(100):
        try:
            read()
        except client.exceptions.ApiException as e:
            if e.status == 404:
                return True
        time.sleep(0.1)
    return False


out["foreground_gone"] = [
    gone(lambda: apps.read_namespaced_replica_set("py-web-rs", ns)),
    gone(lambda: apps.read_namespaced_deployment("py-web", ns)),
]

owner = core.create_namespaced_config_map(ns, {"metadata": {"name": "py-owner"}})
core.create_namespaced_config_map(
    ns,
    {"metadata": {"name": "py-dependent", "ownerReferences": [{
        "apiVersion": "v1", "kind": "ConfigMap", "name": "py-owner",
        "uid": owner.metadata.uid,
    }]}},
)
core.delete_namespaced_config_map(
    "py-owner", ns, body=client.V1DeleteOptions(propagation_policy="Orphan")
)
orphan_gone = gone(lambda: core.read_namespaced_config_map("py-owner", ns))
refs = None
for _ in range(100):
    refs = core.read_namespaced_config_map("py-dependent", ns).metadata.owner_references
    if not refs:
        break
    time.sleep(0.1)
out["orphaned"] = [orphan_gone, refs]

json.dump(out, sys.stdout)
