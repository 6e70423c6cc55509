//! node.k8s.io: runtime classes.

use serde_json::Value;

use super::columns::*;
use super::time::Time;
use super::util::*;
use super::{Printer, Row};

/// Name, Handler, Age. kube describes Handler with
/// `metav1.ObjectMeta{}.SwaggerDoc()["handler"]`, a key ObjectMeta does not
/// have: the description is empty.
pub(crate) static RUNTIME_CLASS: Printer = Printer {
    columns: &[NAME, col("Handler", "string", ""), AGE],
    print: print_runtime_class,
};

fn print_runtime_class(o: &Value, now: Time) -> Row {
    Row::new(vec![
        Value::from(name(o)),
        Value::from(str_at(o, &["handler"])),
        age(o, now),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    use crate::table::time::test_now as now;

    // Facts from kube's printers_test.go TestPrintRuntimeClass.
    #[test]
    fn runtime_classes() {
        let cols: Vec<(&str, &str, i32)> = RUNTIME_CLASS
            .columns
            .iter()
            .map(|c| (c.name, c.description, c.priority))
            .collect();
        assert_eq!(
            cols,
            vec![
                ("Name", OBJECT_META_NAME, 0),
                ("Handler", "", 0),
                ("Age", OBJECT_META_CREATION_TIMESTAMP, 0)
            ]
        );
        let rc = json!({"metadata": {"name": "rc1", "creationTimestamp": "2024-05-01T11:59:50Z"}, "handler": "h1"});
        assert_eq!(
            print_runtime_class(&rc, now()).cells,
            vec![json!("rc1"), json!("h1"), json!("10s")]
        );
        let bare = json!({"metadata": {"name": "rc2"}});
        assert_eq!(
            print_runtime_class(&bare, now()).cells,
            vec![json!("rc2"), json!(""), json!("<unknown>")]
        );
    }
}
