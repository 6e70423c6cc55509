use std::path::Path;

use super::*;

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn read(path: &Path) -> Result<(PluginConfig, Vec<String>), String> {
    let mut c = PluginConfig::default();
    read_admission_config(path, &mut c)
        .map(|w| (c, w))
        .map_err(|e| e.to_string())
}

const PS_INLINE: &str = r#"
apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: PodSecurity
  configuration:
    apiVersion: pod-security.admission.config.k8s.io/v1
    kind: PodSecurityConfiguration
    defaults: {enforce: baseline}
    exemptions: {namespaces: [kube-system]}
- name: EventRateLimit
  configuration: {kind: Configuration}
- name: NotAPlugin
  path: nowhere.yaml
"#;

#[test]
fn inline_yaml_configures_pod_security() {
    let dir = tempfile::tempdir().unwrap();
    let (c, warnings) = read(&write(dir.path(), "a.yaml", PS_INLINE)).unwrap();
    assert_eq!(c.pod_security.defaults["enforce"], "baseline");
    assert_eq!(c.pod_security.exempt_namespaces, ["kube-system"]);
    // EventRateLimit is not enabled, NotAPlugin is not a plugin: neither
    // configuration is read.
    assert!(warnings.is_empty(), "{warnings:?}");
}

#[test]
fn json_and_relative_paths_configure_resource_quota() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    write(
        dir.path(),
        "sub/rq.json",
        r#"{"apiVersion":"apiserver.config.k8s.io/v1","kind":"ResourceQuotaConfiguration","limitedResources":[{"resource":"pods","matchContains":["cpu"]}]}"#,
    );
    let main = write(
        dir.path(),
        "admission.json",
        r#"{"apiVersion":"apiserver.k8s.io/v1alpha1","kind":"AdmissionConfiguration","plugins":[{"name":"ResourceQuota","path":"sub/rq.json"}]}"#,
    );
    let (c, _) = read(&main).unwrap();
    assert_eq!(c.resource_quota.limited_resources[0].resource, "pods");
}

#[test]
fn a_configured_plugin_keelson_does_not_run_warns() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(
        dir.path(),
        "a.yaml",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: EventRateLimit\n  configuration: {kind: Configuration}\n",
    );
    let mut c = PluginConfig::from_flags(&["EventRateLimit".into()], &[]).unwrap();
    let w = read_admission_config(&p, &mut c).unwrap();
    assert_eq!(w, [not_implemented("EventRateLimit")]);
}

#[test]
fn start_errors_read_as_kube() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("none.yaml");
    assert_eq!(
        read(&missing).unwrap_err(),
        format!(
            "failed to apply admission: failed to read plugin config: unable to read admission control configuration from {:?} [open {}: no such file or directory]",
            missing.display().to_string(),
            missing.display()
        )
    );
    let wrong = write(
        dir.path(),
        "w.yaml",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: Admission\n",
    );
    assert_eq!(
        read(&wrong).unwrap_err(),
        r#"failed to apply admission: failed to read plugin config: no kind "Admission" is registered for version "apiserver.config.k8s.io/v1" in scheme "k8s.io/apiserver/pkg/server/options/admission.go""#
    );
    let no_kind = write(dir.path(), "k.yaml", "plugins: []\n");
    assert_eq!(
        read(&no_kind).unwrap_err(),
        "failed to apply admission: failed to read plugin config: Object 'Kind' is missing in 'plugins: []\n'"
    );
    let legacy = write(dir.path(), "l.yaml", "imagePolicy: {}\n");
    assert!(read(&legacy).is_ok());
    let bad_level = write(
        dir.path(),
        "b.yaml",
        &PS_INLINE.replace("enforce: baseline", "enforce: strict"),
    );
    assert_eq!(
        read(&bad_level).unwrap_err(),
        r#"failed to apply admission: failed to initialize admission plugin "PodSecurity": PodSecurity configuration error: Enforce.Level: must be one of privileged, baseline, restricted"#
    );
    let no_kind = write(
        dir.path(),
        "n.yaml",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: PodSecurity\n  configuration: {defaults: {}}\n",
    );
    assert_eq!(
        read(&no_kind).unwrap_err(),
        r#"failed to apply admission: couldn't init admission plugin "PodSecurity": Object 'Kind' is missing in '{"defaults":{}}'"#
    );
    let rq = write(
        dir.path(),
        "r.yaml",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: ResourceQuota\n  configuration:\n    apiVersion: apiserver.config.k8s.io/v1\n    kind: ResourceQuotaConfiguration\n    limitedResources: [{apiGroup: ''}]\n",
    );
    assert_eq!(
        read(&rq).unwrap_err(),
        r#"failed to apply admission: couldn't init admission plugin "ResourceQuota": limitedResources[0].resource: Required value"#
    );
    let gone = write(
        dir.path(),
        "g.yaml",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: ResourceQuota\n  path: gone.yaml\n",
    );
    let at = dir.path().join("gone.yaml");
    assert_eq!(
        read(&gone).unwrap_err(),
        format!(
            "Couldn't open admission plugin configuration {}: &fs.PathError{{Op:\"open\", Path:{:?}, Err:0x2}}",
            at.display(),
            at.display().to_string()
        )
    );
}

#[test]
fn webhook_plugins_take_a_kube_config_file() {
    let dir = tempfile::tempdir().unwrap();
    let kc = write(
        dir.path(),
        "kc.yaml",
        "users:\n- name: hook.ns.svc\n  user: {token: t}\n",
    );
    let file = |path: &str| {
        format!(
            "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: MutatingAdmissionWebhook\n  configuration:\n    apiVersion: apiserver.config.k8s.io/v1alpha1\n    kind: WebhookAdmission\n    kubeConfigFile: {path}\n"
        )
    };
    let (c, warnings) = read(&write(
        dir.path(),
        "a.yaml",
        &file(&kc.display().to_string()),
    ))
    .unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    let creds = c
        .webhook_auth
        .mutating
        .as_ref()
        .and_then(|a| a.for_service("hook", "ns", 443).cloned());
    assert_eq!(creds.and_then(|c| c.bearer), Some("t".into()));
    assert!(c.webhook_auth.validating.is_none());
    assert_eq!(
        read(&write(dir.path(), "b.yaml", &file("kc.yaml"))).unwrap_err(),
        r#"failed to apply admission: couldn't init admission plugin "MutatingAdmissionWebhook": kubeConfigFile: Invalid value: "kc.yaml": must be an absolute file path"#
    );
}
