//! Kubernetes format library: `format.named(name)`, `format.<name>()` and
//! `<format>.validate(value)` (an optional list of messages), reusing the
//! name validators of `keelson-apimachinery` for kube's wording.

use super::no_overload;
use crate::eval::{EvalError, EvalResult, Evaluator};
use crate::value::Value;
use keelson_apimachinery::names;

const FORMATS: &[&str] = &[
    "dns1123Label",
    "dns1123Subdomain",
    "dns1035Label",
    "qualifiedName",
    "dns1123LabelPrefix",
    "dns1123SubdomainPrefix",
    "dns1035LabelPrefix",
    "labelValue",
    "uri",
    "uuid",
    "byte",
    "date",
    "datetime",
];

/// `format.named(name)` and `format.<name>()`.
pub fn global(name: &str, arg: Option<Value>) -> EvalResult {
    match (name, arg) {
        ("format.named", Some(Value::Str(n))) => Ok(Value::Optional(
            FORMATS
                .contains(&&*n)
                .then(|| Box::new(Value::Format(n.clone()))),
        )),
        (n, None) => {
            let short = &n["format.".len()..];
            if FORMATS.contains(&short) {
                Ok(Value::Format(short.into()))
            } else {
                Err(EvalError::msg(format!("no such overload: {n}")))
            }
        }
        _ => Err(no_overload()),
    }
}

fn strip_prefix_check(v: &str, check: fn(&str) -> Vec<String>) -> Vec<String> {
    // a prefix may end in '-' (generateName style): validate with a trailing 'a'
    let candidate = if v.ends_with('-') {
        format!("{v}a")
    } else {
        v.to_string()
    };
    check(&candidate)
}

/// `<format>.validate(value)`.
pub fn validate(_ev: &mut Evaluator<'_>, target: &Value, args: Vec<Value>) -> EvalResult {
    let (Value::Format(f), Some(Value::Str(s))) = (target, args.first()) else {
        return Err(no_overload());
    };
    let s: &str = s;
    let errs: Vec<String> = match &**f {
        "dns1123Label" => names::is_dns1123_label(s),
        "dns1123Subdomain" => names::is_dns1123_subdomain(s),
        "dns1035Label" => names::is_dns1035_label(s),
        "qualifiedName" => names::is_qualified_name(s),
        "dns1123LabelPrefix" => strip_prefix_check(s, names::is_dns1123_label),
        "dns1123SubdomainPrefix" => strip_prefix_check(s, names::is_dns1123_subdomain),
        "dns1035LabelPrefix" => strip_prefix_check(s, names::is_dns1035_label),
        "labelValue" => names::is_valid_label_value(s),
        "uri" => match url::Url::parse(s) {
            Ok(_) => vec![],
            Err(_) if s.starts_with('/') => vec![],
            Err(_) => vec!["invalid URI".into()],
        },
        "uuid" => {
            let re = super::strings::regex(
                "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$",
            )?;
            if re.is_match(s) {
                vec![]
            } else {
                vec!["does not match the UUID format".into()]
            }
        }
        "byte" => {
            use base64::Engine as _;
            match base64::engine::general_purpose::STANDARD.decode(s) {
                Ok(_) => vec![],
                Err(_) => vec!["invalid base64".into()],
            }
        }
        "date" => match chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d") {
            Ok(_) => vec![],
            Err(_) => vec!["invalid date".into()],
        },
        "datetime" => match chrono::DateTime::parse_from_rfc3339(s) {
            Ok(_) => vec![],
            Err(_) => vec!["invalid datetime".into()],
        },
        _ => return Err(no_overload()),
    };
    Ok(Value::Optional(if errs.is_empty() {
        None
    } else {
        Some(Box::new(Value::list(
            errs.into_iter().map(Value::str).collect(),
        )))
    }))
}
