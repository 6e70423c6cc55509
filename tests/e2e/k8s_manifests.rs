//! `k8s/` renders with kustomize and is accepted by Keelson itself: a
//! server-side dry run, then a real apply, with the real kubectl.

mod support;

use std::path::Path;
use std::process::Command;

use support::{Cluster, Mode};

/// `kubectl kustomize k8s/<dir>`.
fn render(dir: &str) -> String {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../k8s")
        .join(dir);
    let rendered = Command::new("kubectl")
        .arg("kustomize")
        .arg(&dir)
        .output()
        .expect("kubectl runs");
    assert!(
        rendered.status.success(),
        "kustomize: {}",
        String::from_utf8_lossy(&rendered.stderr)
    );
    String::from_utf8(rendered.stdout).expect("utf-8")
}

#[test]
fn k8s_manifests_render_and_apply_to_keelson() {
    let yaml = render("");
    for kind in [
        "kind: Namespace",
        "kind: ConfigMap",
        "kind: StatefulSet",
        "kind: Deployment",
        "kind: HorizontalPodAutoscaler",
        "kind: PodDisruptionBudget",
    ] {
        assert!(yaml.contains(kind), "{kind} missing");
    }

    let c = Cluster::start(Mode::Embedded);
    // As on kube-apiserver, a dry run of namespaced objects needs their
    // namespace to exist.
    c.ok(&["create", "namespace", "keelson"]);
    let dry = c.ok_stdin(&["apply", "--dry-run=server", "-f", "-"], &yaml);
    assert!(
        dry.contains("deployment.apps/keelson-gateway created (server dry run)"),
        "{dry}"
    );
    // A dry run stores nothing.
    let none = c.ok(&["get", "deploy,sts", "-n", "keelson", "-o", "name"]);
    assert_eq!(none, "");

    let out = c.ok_stdin(&["apply", "-f", "-"], &yaml);
    assert!(
        out.contains("statefulset.apps/keelson-store created"),
        "{out}"
    );
    let names = c.ok(&[
        "get",
        "deploy,sts,svc,hpa,pdb,cm",
        "-n",
        "keelson",
        "-o",
        "name",
    ]);
    for want in [
        "deployment.apps/keelson-gateway",
        "deployment.apps/keelson-watch",
        "deployment.apps/keelson-admission",
        "deployment.apps/keelson-merge",
        "deployment.apps/keelson-controllers",
        "statefulset.apps/keelson-store",
        "service/keelson-watch",
        "horizontalpodautoscaler.autoscaling/keelson-watch",
        "poddisruptionbudget.policy/keelson-watch",
        "configmap/keelson-config",
    ] {
        assert!(names.contains(want), "{want} missing: {names}");
    }
    // The watch Service is headless: its name resolves to every replica.
    let ip = c.ok(&[
        "get",
        "svc",
        "keelson-watch",
        "-n",
        "keelson",
        "-o",
        "jsonpath={.spec.clusterIP}",
    ]);
    assert_eq!(ip, "None");
    // Applying again changes nothing.
    let again = c.ok_stdin(&["apply", "-f", "-"], &yaml);
    assert!(
        again.contains("deployment.apps/keelson-gateway unchanged"),
        "{again}"
    );
}

/// The etcd overlay: a 3-member etcd StatefulSet, the store as a stateless
/// Deployment behind a headless Service, no sled StatefulSet.
#[test]
fn k8s_etcd_overlay_renders_and_applies_to_keelson() {
    let yaml = render("etcd");
    assert!(yaml.contains("image: keelson-etcd:dev"), "{yaml}");
    assert!(yaml.contains("--storage-backend=etcd3"), "{yaml}");

    let c = Cluster::start(Mode::Embedded);
    c.ok(&["create", "namespace", "keelson"]);
    let dry = c.ok_stdin(&["apply", "--dry-run=server", "-f", "-"], &yaml);
    assert!(
        dry.contains("statefulset.apps/keelson-etcd created (server dry run)"),
        "{dry}"
    );
    c.ok_stdin(&["apply", "-f", "-"], &yaml);
    let names = c.ok(&["get", "deploy,sts,svc,pdb", "-n", "keelson", "-o", "name"]);
    for want in [
        "statefulset.apps/keelson-etcd",
        "deployment.apps/keelson-store",
        "service/keelson-etcd",
        "poddisruptionbudget.policy/keelson-etcd",
        "poddisruptionbudget.policy/keelson-store",
    ] {
        assert!(names.contains(want), "{want} missing: {names}");
    }
    assert!(
        !names.contains("statefulset.apps/keelson-store"),
        "the sled StatefulSet is gone: {names}"
    );
    let replicas = c.ok(&[
        "get",
        "sts",
        "keelson-etcd",
        "-n",
        "keelson",
        "-o",
        "jsonpath={.spec.replicas}",
    ]);
    assert_eq!(replicas, "3");
    // Both Services clients resolve to every replica are headless.
    for svc in ["keelson-store", "keelson-etcd"] {
        let ip = c.ok(&[
            "get",
            "svc",
            svc,
            "-n",
            "keelson",
            "-o",
            "jsonpath={.spec.clusterIP}",
        ]);
        assert_eq!(ip, "None", "{svc}");
    }
}
