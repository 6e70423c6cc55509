//! CEL validation rules (`x-kubernetes-validations`) on a CustomResource
//! with the installed kubectl: rules accept and reject objects with kube's
//! messages, transition rules see the old object, and a rule over the cost
//! limit makes the CRD itself invalid.

mod support;

use support::{Cluster, Mode};

const CRD: &str = r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.cel.example.com
spec:
  group: cel.example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            x-kubernetes-validations:
            - rule: "self.minReplicas <= self.replicas && self.replicas <= self.maxReplicas"
              message: "replicas should be in range"
            - rule: "self.name.startsWith('w-')"
            - rule: "size(self.tags) <= 3"
              messageExpression: "'too many tags: ' + string(size(self.tags))"
            properties:
              name: {type: string, maxLength: 32}
              replicas: {type: integer}
              minReplicas: {type: integer}
              maxReplicas: {type: integer}
              tags: {type: array, maxItems: 10, items: {type: string, maxLength: 16}}
              owner:
                type: string
                x-kubernetes-validations:
                - rule: "self == oldSelf"
                  message: "owner is immutable"
"#;

const EXPENSIVE: &str = r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: costly.cel.example.com
spec:
  group: cel.example.com
  scope: Namespaced
  names: {plural: costly, singular: costly, kind: Costly, listKind: CostlyList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              hosts:
                type: array
                items: {type: string}
                x-kubernetes-validations:
                - rule: "self.all(x, self.all(y, x.contains(y)))"
"#;

fn widget(name: &str, spec: &str) -> String {
    format!(
        "apiVersion: cel.example.com/v1\nkind: Widget\nmetadata: {{name: {name}}}\nspec: {spec}\n"
    )
}

fn scenario(mode: Mode) {
    let c = Cluster::start(mode);
    c.ok_stdin(&["apply", "-f", "-"], CRD);
    c.ok(&[
        "wait",
        "--for=condition=Established",
        "crd/widgets.cel.example.com",
        "--timeout=10s",
    ]);

    let good = "{name: w-1, replicas: 2, minReplicas: 1, maxReplicas: 3, tags: [a], owner: me}";
    c.ok_stdin(&["create", "-f", "-"], &widget("good", good));

    let err = c.fails(
        &["create", "-f", "-"],
        Some(&widget(
            "bad",
            "{name: x-1, replicas: 5, minReplicas: 1, maxReplicas: 3, tags: [a, b, c, d], owner: me}",
        )),
    );
    assert!(err.contains(r#"The Widget "bad" is invalid"#), "{err}");
    assert!(
        err.contains(r#"spec: Invalid value: "object": replicas should be in range"#),
        "{err}"
    );
    assert!(
        err.contains(r#"spec: Invalid value: "object": failed rule: self.name.startsWith('w-')"#),
        "{err}"
    );
    assert!(err.contains("too many tags: 4"), "{err}");

    // A transition rule runs on update only, against the stored object.
    let err = c.fails(
        &["apply", "-f", "-"],
        Some(&widget(
            "good",
            "{name: w-1, replicas: 2, minReplicas: 1, maxReplicas: 3, tags: [a], owner: you}",
        )),
    );
    assert!(
        err.contains(r#"spec.owner: Invalid value: "string": owner is immutable"#),
        "{err}"
    );
    c.ok(&[
        "patch",
        "widget",
        "good",
        "--type=merge",
        "-p",
        r#"{"spec":{"replicas":3}}"#,
    ]);

    // A rule too expensive for its unbounded list is refused with the CRD.
    let err = c.fails(&["create", "-f", "-"], Some(EXPENSIVE));
    assert!(
        err.contains(r#"The CustomResourceDefinition "costly.cel.example.com" is invalid"#),
        "{err}"
    );
    assert!(
        err.contains("x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of"),
        "{err}"
    );
}

#[test]
fn cel_rules_embedded() {
    scenario(Mode::Embedded);
}

#[test]
fn cel_rules_distributed() {
    scenario(Mode::Distributed);
}
