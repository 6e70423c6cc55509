//! ValidatingAdmissionPolicy with the installed kubectl: a bound policy
//! refuses a Deployment with too many replicas with kube's message, on
//! create and on update, and a `Warn` binding admits with a warning; a
//! policy whose expression does not compile is refused as kube refuses it;
//! the type checker's warnings land in the policy's status; `authorizer`
//! checks the (impersonated) user with RBAC.

mod support;

use std::time::{Duration, Instant};

use support::{Cluster, Mode};

const POLICY: &str = r#"apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: max-replicas
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - apiGroups: ["apps"]
      apiVersions: ["v1"]
      operations: ["CREATE", "UPDATE"]
      resources: ["deployments"]
  validations:
  - expression: "object.spec.replicas <= 5"
    message: "replicas must be no greater than 5"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: max-replicas-binding
spec:
  policyName: max-replicas
  validationActions: [Deny]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: warn-replicas
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: ["apps"]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["deployments"]
  validations:
  - expression: "object.spec.replicas <= 2"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: warn-replicas-binding
spec:
  policyName: warn-replicas
  validationActions: [Warn]
"#;

/// A limit read from ConfigMap params: by name (Deny) and by label
/// selector (Warn, one evaluation per param), only in labelled namespaces.
const PARAM_POLICY: &str = r#"apiVersion: v1
kind: Namespace
metadata:
  name: limited
  labels:
    limits: "on"
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: limits
  namespace: limited
  labels:
    role: limit
data:
  max: "3"
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: tight
  namespace: limited
  labels:
    role: limit
data:
  max: "2"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: param-replicas
spec:
  paramKind:
    apiVersion: v1
    kind: ConfigMap
  matchConstraints:
    resourceRules:
    - apiGroups: ["apps"]
      apiVersions: ["v1"]
      operations: ["CREATE", "UPDATE"]
      resources: ["deployments"]
  validations:
  - expression: "object.spec.replicas <= int(params.data.max)"
    messageExpression: "'replicas must be at most ' + params.data.max + ' (from ' + params.metadata.name + ')'"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: by-name
spec:
  policyName: param-replicas
  validationActions: [Deny]
  paramRef:
    name: limits
    parameterNotFoundAction: Deny
  matchResources:
    namespaceSelector:
      matchLabels:
        limits: "on"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: by-selector
spec:
  policyName: param-replicas
  validationActions: [Warn]
  paramRef:
    selector:
      matchLabels:
        role: limit
    parameterNotFoundAction: Allow
  matchResources:
    namespaceSelector:
      matchLabels:
        limits: "on"
"#;

/// Retry `check` until it holds (policies, params and status are followed
/// asynchronously, as in kube).
fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !check() {
        assert!(Instant::now() < deadline, "{what}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn params_scenario(c: &Cluster) {
    c.ok_stdin(&["apply", "-f", "-"], PARAM_POLICY);
    let four = [
        "-n",
        "limited",
        "create",
        "deployment",
        "four",
        "--image=nginx",
        "--replicas=4",
    ];
    eventually("the param policy never took effect", || {
        !c.kubectl(&[&four[..], &["--dry-run=server"]].concat())
            .status
            .success()
    });
    let err = c.fails(&four, None);
    assert_eq!(
        err.trim(),
        "error: failed to create deployment: deployments.apps \"four\" is forbidden: ValidatingAdmissionPolicy 'param-replicas' with binding 'by-name' denied request: replicas must be at most 3 (from limits)"
    );
    // The 422 by reason Invalid, as kubectl shows a Status from a file.
    let manifest = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: five\n  namespace: limited\nspec:\n  replicas: 5\n  selector:\n    matchLabels: {app: five}\n  template:\n    metadata:\n      labels: {app: five}\n    spec:\n      containers: [{name: nginx, image: nginx}]\n";
    let err = c.fails(&["create", "-f", "-"], Some(manifest));
    assert_eq!(
        err.trim(),
        "The deployments \"five\" is invalid: : ValidatingAdmissionPolicy 'param-replicas' with binding 'by-name' denied request: replicas must be at most 3 (from limits)"
    );
    // Within the named limit, over one selected param's: a warning per
    // failing param, from the Warn binding.
    let out = c.kubectl(&[
        "-n",
        "limited",
        "create",
        "deployment",
        "three",
        "--image=nginx",
        "--replicas=3",
    ]);
    assert!(out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("Warning: Validation failed for ValidatingAdmissionPolicy 'param-replicas' with binding 'by-selector': replicas must be at most 2 (from tight)"),
        "{stderr}"
    );
    assert!(!stderr.contains("(from limits)"), "{stderr}");
    // Outside the labelled namespaces the bindings do not apply.
    c.ok(&[
        "create",
        "deployment",
        "four",
        "--image=nginx",
        "--replicas=4",
    ]);

    // The status controller's part: generation observed, clean type check.
    eventually("the policy status was never written", || {
        c.ok(&[
            "get",
            "validatingadmissionpolicy",
            "param-replicas",
            "-o",
            "jsonpath={.status.observedGeneration}",
        ])
        .trim()
            == "1"
    });

    // The named param gone: parameterNotFoundAction Deny.
    c.ok(&["-n", "limited", "delete", "configmap", "limits"]);
    let one = [
        "-n",
        "limited",
        "create",
        "deployment",
        "one",
        "--image=nginx",
        "--replicas=1",
    ];
    let mut last = String::new();
    eventually("a missing param was never refused", || {
        let out = c.kubectl(&[&one[..], &["--dry-run=server"]].concat());
        last = String::from_utf8_lossy(&out.stderr).into_owned();
        !out.status.success()
    });
    assert_eq!(
        last.trim(),
        "error: failed to create deployment: deployments.apps \"one\" is forbidden: ValidatingAdmissionPolicy 'param-replicas' with binding 'by-name' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction"
    );
}

/// An expression that does not compile, under either failure policy.
const BROKEN: &str = r#"apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: broken
spec:
  failurePolicy: FAILURE
  matchConstraints:
    resourceRules:
    - apiGroups: ["apps"]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["deployments"]
  validations:
  - expression: "x == 1"
"#;

/// Compiles (object is dyn) but names a field Deployments do not have.
const TYPED: &str = r#"apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: typed
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - apiGroups: ["apps"]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["deployments"]
  validations:
  - expression: "object.spec.replicas >= 0"
  - expression: "object.spec.foo == 'x'"
"#;

/// Only users who may read the namespace's Secrets create Deployments in
/// `authz`; alice may, bob may not.
const AUTHZ: &str = r#"apiVersion: v1
kind: Namespace
metadata:
  name: authz
  labels:
    authz: "on"
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: deployer
  namespace: authz
rules:
- apiGroups: ["apps"]
  resources: ["deployments"]
  verbs: ["create"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: deployers
  namespace: authz
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: deployer
subjects:
- kind: User
  name: alice
- kind: User
  name: bob
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: secret-reader
  namespace: authz
rules:
- apiGroups: [""]
  resources: ["secrets"]
  verbs: ["get"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: secret-readers
  namespace: authz
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: secret-reader
subjects:
- kind: User
  name: alice
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: secret-readers
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - apiGroups: ["apps"]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["deployments"]
  validations:
  - expression: "authorizer.group('').resource('secrets').namespace(object.metadata.namespace).check('get').allowed()"
    messageExpression: "'user ' + request.userInfo.username + ' may not read secrets'"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: secret-readers-binding
spec:
  policyName: secret-readers
  validationActions: [Deny]
  matchResources:
    namespaceSelector:
      matchLabels:
        authz: "on"
"#;

fn compile_scenario(c: &Cluster) {
    for failure in ["Fail", "Ignore"] {
        let err = c.fails(
            &["create", "-f", "-"],
            Some(&BROKEN.replace("FAILURE", failure)),
        );
        assert_eq!(
            err.trim(),
            "The ValidatingAdmissionPolicy \"broken\" is invalid: spec.validations[0].expression: Invalid value: \"x == 1\": compilation failed: ERROR: <input>:1:1: undeclared reference to 'x' (in container '')\n | x == 1\n | ^",
            "failurePolicy {failure}"
        );
    }
    assert!(!c
        .kubectl(&["get", "validatingadmissionpolicy", "broken"])
        .status
        .success());
}

fn type_checking_scenario(c: &Cluster) {
    c.ok_stdin(&["create", "-f", "-"], TYPED);
    let want = serde_json::json!([{
        "fieldRef": "spec.validations[1].expression",
        "warning": "apps/v1, Kind=Deployment: ERROR: <input>:1:12: undefined field 'foo'\n | object.spec.foo == 'x'\n | ...........^\n",
    }]);
    let mut status = serde_json::Value::Null;
    eventually("the policy's type checking status", || {
        let out = c.ok(&["get", "validatingadmissionpolicy", "typed", "-o", "json"]);
        let policy: serde_json::Value = serde_json::from_str(&out).unwrap_or_default();
        status = policy["status"].clone();
        status["observedGeneration"] == 1
    });
    assert_eq!(
        status["typeChecking"]["expressionWarnings"], want,
        "{status}"
    );
}

fn authorizer_scenario(c: &Cluster) {
    c.ok_stdin(&["apply", "-f", "-"], AUTHZ);
    let create = |user: &str, name: &str, dry_run: bool| {
        let mut args = vec![
            "--as",
            user,
            "-n",
            "authz",
            "create",
            "deployment",
            name,
            "--image=nginx",
        ];
        if dry_run {
            args.push("--dry-run=server");
        }
        c.kubectl(&args)
    };
    // The policy and the RBAC objects are followed asynchronously.
    eventually("bob is refused", || {
        !create("bob", "probe", true).status.success()
    });
    eventually("alice is admitted", || {
        create("alice", "probe", true).status.success()
    });
    let out = create("bob", "by-bob", false);
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        "error: failed to create deployment: deployments.apps \"by-bob\" is forbidden: ValidatingAdmissionPolicy 'secret-readers' with binding 'secret-readers-binding' denied request: user bob may not read secrets"
    );
    let out = create("alice", "by-alice", false);
    assert!(out.status.success(), "{out:?}");
}

/// Policies on subresources with their own kinds: kube admits the Scale
/// of `/scale` (`autoscaling/v1`), the Eviction of `pods/eviction`
/// (`policy/v1`) and the Binding of `pods/binding` (`v1`).
const SUBRESOURCE_POLICIES: &str = r#"apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: max-scale
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: ["apps"]
      apiVersions: ["v1"]
      operations: ["UPDATE"]
      resources: ["deployments/scale"]
  validations:
  - expression: "object.spec.replicas <= 5 && oldObject.kind == 'Scale'"
    messageExpression: "'scale of ' + request.kind.group + '/' + request.kind.version + ' ' + request.kind.kind + ' from ' + string(oldObject.spec.replicas) + ' is at most 5'"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: max-scale-binding
spec:
  policyName: max-scale
  validationActions: [Deny]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: no-eviction
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["pods/eviction", "pods/binding"]
  validations:
  - expression: "request.subResource != 'eviction'"
    messageExpression: "object.apiVersion + ' ' + object.kind + ' of ' + request.name + ' refused'"
  - expression: "request.subResource != 'binding' || object.target.name != 'forbidden-node'"
    message: "not on that node"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: no-eviction-binding
spec:
  policyName: no-eviction
  validationActions: [Deny]
"#;

fn subresource_scenario(c: &Cluster) {
    c.ok_stdin(&["apply", "-f", "-"], SUBRESOURCE_POLICIES);
    c.ok(&[
        "create",
        "deployment",
        "scaled",
        "--image=nginx",
        "--replicas=2",
    ]);
    eventually("the scale policy takes effect", || {
        !c.kubectl(&[
            "scale",
            "deployment",
            "scaled",
            "--replicas=9",
            "--dry-run=server",
        ])
        .status
        .success()
    });
    let err = c.fails(&["scale", "deployment", "scaled", "--replicas=9"], None);
    assert!(
        err.contains("ValidatingAdmissionPolicy 'max-scale' with binding 'max-scale-binding' denied request: scale of autoscaling/v1 Scale from 2 is at most 5"),
        "{err}"
    );
    c.ok(&["scale", "deployment", "scaled", "--replicas=4"]);
    assert_eq!(
        c.ok(&[
            "get",
            "deployment",
            "scaled",
            "-o",
            "jsonpath={.spec.replicas}"
        ]),
        "4"
    );

    c.ok(&["run", "evictee", "--image=nginx"]);
    let binding = |node: &str| {
        format!(
            r#"{{"apiVersion":"v1","kind":"Binding","metadata":{{"name":"evictee"}},"target":{{"kind":"Node","name":"{node}"}}}}"#
        )
    };
    let raw = |sub: &str| format!("/api/v1/namespaces/default/pods/evictee/{sub}");
    eventually("the binding policy takes effect", || {
        let out = c.kubectl_stdin(
            &["create", "--raw", &raw("binding?dryRun=All"), "-f", "-"],
            Some(&binding("forbidden-node")),
        );
        !out.status.success()
    });
    let err = c.fails(
        &["create", "--raw", &raw("binding"), "-f", "-"],
        Some(&binding("forbidden-node")),
    );
    assert!(
        err.contains("ValidatingAdmissionPolicy 'no-eviction' with binding 'no-eviction-binding' denied request: not on that node"),
        "{err}"
    );
    c.ok_stdin(
        &["create", "--raw", &raw("binding"), "-f", "-"],
        &binding("node-a"),
    );
    assert_eq!(
        c.ok(&["get", "pod", "evictee", "-o", "jsonpath={.spec.nodeName}"]),
        "node-a"
    );

    // A policy/v1beta1 body is admitted as kube's policy/v1 Eviction.
    let err = c.fails(
        &["create", "--raw", &raw("eviction"), "-f", "-"],
        Some(r#"{"apiVersion":"policy/v1beta1","kind":"Eviction","metadata":{"name":"evictee"}}"#),
    );
    assert!(
        err.contains("ValidatingAdmissionPolicy 'no-eviction' with binding 'no-eviction-binding' denied request: policy/v1 Eviction of evictee refused"),
        "{err}"
    );
    assert_eq!(
        c.ok(&["get", "pod", "evictee", "-o", "name"]).trim(),
        "pod/evictee"
    );
}

const DENIED: &str = "ValidatingAdmissionPolicy 'max-replicas' with binding 'max-replicas-binding' denied request: replicas must be no greater than 5";

fn scenario(mode: Mode) {
    let c = Cluster::start(mode);
    c.ok_stdin(&["apply", "-f", "-"], POLICY);

    // Policies take effect once admission has seen them (as in kube).
    let big = [
        "create",
        "deployment",
        "big",
        "--image=nginx",
        "--replicas=10",
    ];
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let probe = c.kubectl(&[&big[..], &["--dry-run=server"]].concat());
        if !probe.status.success() {
            break;
        }
        assert!(Instant::now() < deadline, "the policy never took effect");
        std::thread::sleep(Duration::from_millis(200));
    }
    let err = c.fails(&big, None);
    assert_eq!(
        err.trim(),
        format!(
            "error: failed to create deployment: deployments.apps \"big\" is forbidden: {DENIED}"
        )
    );
    assert!(c.kubectl(&["get", "deployment", "big"]).status.code() != Some(0));

    // Within the limit: admitted, with the Warn binding's warning.
    let out = c.kubectl(&[
        "create",
        "deployment",
        "small",
        "--image=nginx",
        "--replicas=3",
    ]);
    assert!(out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("Warning: Validation failed for ValidatingAdmissionPolicy 'warn-replicas' with binding 'warn-replicas-binding': failed expression: object.spec.replicas <= 2"),
        "{stderr}"
    );

    // An update over the limit is refused too.
    let err = c.fails(
        &[
            "patch",
            "deployment",
            "small",
            "--type=merge",
            "-p",
            r#"{"spec":{"replicas":8}}"#,
        ],
        None,
    );
    assert_eq!(
        err.trim(),
        // kubectl words a 422 with causes itself: the cause has no field.
        format!("The deployments \"small\" is invalid: : {DENIED}")
    );

    // Without the binding the policy does nothing.
    c.ok(&[
        "delete",
        "validatingadmissionpolicybinding",
        "max-replicas-binding",
    ]);
    let deadline = Instant::now() + Duration::from_secs(20);
    while !c.kubectl(&big).status.success() {
        assert!(
            Instant::now() < deadline,
            "the deleted binding is still enforced"
        );
        std::thread::sleep(Duration::from_millis(200));
    }

    params_scenario(&c);
    compile_scenario(&c);
    type_checking_scenario(&c);
    authorizer_scenario(&c);
    subresource_scenario(&c);
}

#[test]
fn admission_policy_embedded() {
    scenario(Mode::Embedded);
}

#[test]
fn admission_policy_distributed() {
    scenario(Mode::Distributed);
}

/// A MutatingAdmissionPolicy (`v1beta1`, behind its gate as in kube 1.34):
/// an apply configuration adds a label and a sidecar (merged by name, then
/// defaulted), a JSON patch an annotation and a replica; a matched
/// condition picks the object.
const MUTATING: &str = r#"apiVersion: admissionregistration.k8s.io/v1beta1
kind: MutatingAdmissionPolicy
metadata:
  name: sidecar
spec:
  failurePolicy: Fail
  reinvocationPolicy: IfNeeded
  matchConstraints:
    resourceRules:
    - apiGroups: ["apps"]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["deployments"]
  matchConditions:
  - name: not-atomic
    expression: "!object.metadata.name.startsWith('atomic')"
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: >
        Object{metadata: Object.metadata{labels: {"mutated": "yes"}},
          spec: Object.spec{template: Object.spec.template{spec: Object.spec.template.spec{
            containers: [Object.spec.template.spec.containers{name: "sidecar", image: "busybox:1"}]}}}}
  - patchType: JSONPatch
    jsonPatch:
      expression: >
        [JSONPatch{op: "add", path: "/metadata/annotations", value: {"by": jsonpatch.escapeKey("a/b")}},
         JSONPatch{op: "replace", path: "/spec/replicas", value: object.spec.replicas + 1}]
---
apiVersion: admissionregistration.k8s.io/v1beta1
kind: MutatingAdmissionPolicyBinding
metadata:
  name: sidecar-binding
spec:
  policyName: sidecar
---
apiVersion: admissionregistration.k8s.io/v1beta1
kind: MutatingAdmissionPolicy
metadata:
  name: atomic
spec:
  reinvocationPolicy: Never
  matchConstraints:
    resourceRules:
    - apiGroups: ["apps"]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["deployments"]
  matchConditions:
  - name: atomic
    expression: "object.metadata.name.startsWith('atomic')"
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: 'Object{spec: Object.spec{selector: Object.spec.selector{matchLabels: {"l": "v"}}}}'
---
apiVersion: admissionregistration.k8s.io/v1beta1
kind: MutatingAdmissionPolicyBinding
metadata:
  name: atomic-binding
spec:
  policyName: atomic
---
apiVersion: admissionregistration.k8s.io/v1beta1
kind: MutatingAdmissionPolicy
metadata:
  name: ignored
spec:
  failurePolicy: Ignore
  reinvocationPolicy: Never
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["configmaps"]
  mutations:
  - patchType: JSONPatch
    jsonPatch:
      expression: '[JSONPatch{op: "add", path: "/metadata/labels/x", value: "y"}]'
---
apiVersion: admissionregistration.k8s.io/v1beta1
kind: MutatingAdmissionPolicyBinding
metadata:
  name: ignored-binding
spec:
  policyName: ignored
"#;

#[test]
fn mutating_admission_policy_embedded() {
    mutating_scenario(Mode::Embedded);
}

#[test]
fn mutating_admission_policy_distributed() {
    mutating_scenario(Mode::Distributed);
}

fn mutating_scenario(mode: Mode) {
    // Every process is given the gate; the gateway the runtime config.
    let c = Cluster::start_with_env(
        mode,
        &[
            ("KEELSON_FEATURE_GATES", "MutatingAdmissionPolicy=true"),
            (
                "KEELSON_RUNTIME_CONFIG",
                "admissionregistration.k8s.io/v1beta1=true",
            ),
        ],
    );
    c.ok_stdin(&["apply", "-f", "-"], MUTATING);
    let create = [
        "create",
        "deployment",
        "web",
        "--image=nginx",
        "--replicas=2",
    ];
    eventually("the mutating policy takes effect", || {
        let out = c.kubectl(&[&create[..], &["--dry-run=server", "-o", "json"]].concat());
        String::from_utf8_lossy(&out.stdout).contains("\"mutated\"")
    });
    c.ok(&create);
    let got: serde_json::Value =
        serde_json::from_str(&c.ok(&["get", "deployment", "web", "-o", "json"])).expect("json");
    assert_eq!(
        got["metadata"]["labels"],
        serde_json::json!({"app": "web", "mutated": "yes"})
    );
    assert_eq!(
        got["metadata"]["annotations"]["by"],
        serde_json::json!("a~1b")
    );
    assert_eq!(got["spec"]["replicas"], 3);
    let containers = &got["spec"]["template"]["spec"]["containers"];
    assert_eq!(containers[0]["name"], "nginx");
    assert_eq!(containers[1]["name"], "sidecar");
    // The mutated object is defaulted again, as kube's dispatcher does.
    assert_eq!(containers[1]["imagePullPolicy"], "IfNotPresent");
    assert_eq!(
        containers[1]["terminationMessagePath"],
        "/dev/termination-log"
    );

    // An apply configuration may not set an atomic struct.
    let err = c.fails(&["create", "deployment", "atomic-1", "--image=nginx"], None);
    assert_eq!(
        err.trim(),
        "error: failed to create deployment: policy 'atomic' with binding 'atomic-binding' denied request: error applying patch: invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: .spec.selector"
    );
    // `failurePolicy: Ignore`: the failed patch is skipped.
    c.ok(&["create", "configmap", "plain", "--from-literal=a=b"]);
    let labels = c.ok(&[
        "get",
        "configmap",
        "plain",
        "-o",
        "jsonpath={.metadata.labels}",
    ]);
    assert_eq!(labels.trim(), "");
}
