//! Resource lists as quota arithmetic sees them (kube's
//! `k8s.io/apiserver/pkg/quota/v1` helpers over `corev1.ResourceList`):
//! exact amounts that remember the format they were written in, so a sum
//! prints as kube prints it (`500m` + `500m` is `1`, `0` + `1Gi` is `1Gi`).

use std::collections::BTreeMap;
use std::fmt;

use keelson_cel::library::quantity::{Format, Quantity};
use serde_json::Value;

/// One quantity: its value in nano-units and the format it prints in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Amount {
    nanos: i128,
    format: Format,
}

impl Amount {
    /// Zero, as kube starts a usage total (`DecimalSI`).
    pub const ZERO: Amount = Amount {
        nanos: 0,
        format: Format::DecimalSi,
    };

    /// A whole count (`DecimalSI`).
    pub fn count(n: i64) -> Amount {
        Amount {
            nanos: i128::from(n) * 1_000_000_000,
            format: Format::DecimalSi,
        }
    }

    /// Parses kube's quantity syntax; `None` if it is not one (or too
    /// large to hold exactly).
    pub fn parse(s: &str) -> Option<Amount> {
        let q = Quantity::parse(s)?;
        Some(Amount {
            nanos: q.nanos()?,
            format: q.format(),
        })
    }

    /// A quantity from JSON: a string, or a number.
    pub fn from_json(v: &Value) -> Option<Amount> {
        match v {
            Value::String(s) => Amount::parse(s),
            Value::Number(n) => Amount::parse(&n.to_string()),
            _ => None,
        }
    }

    /// The value in nano-units.
    pub fn nanos(&self) -> i128 {
        self.nanos
    }

    /// The whole number of units, rounded up (`Quantity.RoundUp(0)`).
    pub fn round_up(self) -> Amount {
        let rem = self.nanos.rem_euclid(1_000_000_000);
        if rem == 0 {
            return self;
        }
        Amount {
            nanos: self.nanos - rem + 1_000_000_000,
            format: self.format,
        }
    }

    /// The larger of the two (the first when equal).
    pub fn max(self, o: Amount) -> Amount {
        if o.nanos > self.nanos {
            o
        } else {
            self
        }
    }
}

/// `Quantity.Add`: a zero receiver takes the other's format.
impl std::ops::Add for Amount {
    type Output = Amount;
    fn add(self, o: Amount) -> Amount {
        Amount {
            nanos: self.nanos.saturating_add(o.nanos),
            format: if self.nanos == 0 {
                o.format
            } else {
                self.format
            },
        }
    }
}

/// `Quantity.Sub`: a zero receiver takes the other's format.
impl std::ops::Sub for Amount {
    type Output = Amount;
    fn sub(self, o: Amount) -> Amount {
        Amount {
            nanos: self.nanos.saturating_sub(o.nanos),
            format: if self.nanos == 0 {
                o.format
            } else {
                self.format
            },
        }
    }
}

impl fmt::Display for Amount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&Quantity::canonical(self.nanos, self.format))
    }
}

/// Resource name → amount, in name order.
pub type ResourceList = BTreeMap<String, Amount>;

/// The quantities of a JSON resource map (values that are not quantities
/// are skipped, as validation refuses them).
pub fn parse_list(v: Option<&Value>) -> ResourceList {
    v.and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| Amount::from_json(v).map(|a| (k.clone(), a)))
                .collect()
        })
        .unwrap_or_default()
}

/// The JSON form: canonical strings, names in order.
pub fn to_json(list: &ResourceList) -> Value {
    Value::Object(
        list.iter()
            .map(|(k, v)| (k.clone(), Value::String(v.to_string())))
            .collect(),
    )
}

/// `quota.Add`: the sum over the union of names.
pub fn add(a: &ResourceList, b: &ResourceList) -> ResourceList {
    let mut out = a.clone();
    for (k, v) in b {
        out.entry(k.clone())
            .and_modify(|x| *x = *x + *v)
            .or_insert(*v);
    }
    out
}

/// `quota.SubtractWithNonNegativeResult`: `a - b`, negative results zero,
/// names only in `b` zero.
pub fn subtract_non_negative(a: &ResourceList, b: &ResourceList) -> ResourceList {
    let zero = Amount::ZERO;
    let mut out = ResourceList::new();
    for (k, v) in a {
        let d = b.get(k).map_or(*v, |o| *v - *o);
        out.insert(k.clone(), if d.nanos > 0 { d } else { zero });
    }
    for k in b.keys() {
        out.entry(k.clone()).or_insert(zero);
    }
    out
}

/// `quota.Mask`: only the named resources.
pub fn mask<S: AsRef<str>>(list: &ResourceList, names: &[S]) -> ResourceList {
    list.iter()
        .filter(|(k, _)| names.iter().any(|n| n.as_ref() == k.as_str()))
        .map(|(k, v)| (k.clone(), *v))
        .collect()
}

/// `quota.RemoveZeros`.
pub fn remove_zeros(list: &ResourceList) -> ResourceList {
    list.iter()
        .filter(|(_, v)| v.nanos != 0)
        .map(|(k, v)| (k.clone(), *v))
        .collect()
}

/// `quota.Equals`: the same names with equal values.
pub fn equals(a: &ResourceList, b: &ResourceList) -> bool {
    a.len() == b.len()
        && a.iter()
            .all(|(k, v)| b.get(k).is_some_and(|o| o.nanos == v.nanos))
}

/// `quota.LessThanOrEqual`: the names of `b` that `a` exceeds.
pub fn exceeded(a: &ResourceList, b: &ResourceList) -> Vec<String> {
    b.iter()
        .filter(|(k, limit)| a.get(*k).is_some_and(|v| v.nanos > limit.nanos))
        .map(|(k, _)| k.clone())
        .collect()
}

/// `quota.IsNegative`: the names with a negative amount.
pub fn negative(list: &ResourceList) -> Vec<String> {
    list.iter()
        .filter(|(_, v)| v.nanos < 0)
        .map(|(k, _)| k.clone())
        .collect()
}

/// kube's `prettyPrint`: `name=value` in name order, joined by commas.
pub fn pretty_print(list: &ResourceList) -> String {
    list.iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(pairs: &[(&str, &str)]) -> ResourceList {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), Amount::parse(v).unwrap()))
            .collect()
    }

    #[test]
    fn sums_print_canonically() {
        let used = list(&[("requests.cpu", "500m"), ("requests.memory", "0")]);
        let req = list(&[("requests.cpu", "500m"), ("requests.memory", "1Gi")]);
        let sum = add(&used, &req);
        assert_eq!(pretty_print(&sum), "requests.cpu=1,requests.memory=1Gi");
        let sum = add(&sum, &list(&[("requests.memory", "512Mi")]));
        assert_eq!(sum["requests.memory"].to_string(), "1536Mi");
    }

    #[test]
    fn subtract_and_compare() {
        let a = list(&[("pods", "1"), ("services", "2")]);
        let b = list(&[("pods", "3"), ("secrets", "1")]);
        let d = subtract_non_negative(&a, &b);
        assert_eq!(pretty_print(&d), "pods=0,secrets=0,services=2");
        assert_eq!(exceeded(&b, &a), vec!["pods".to_string()]);
        assert!(equals(&a, &list(&[("pods", "1000m"), ("services", "2")])));
        assert_eq!(pretty_print(&remove_zeros(&d)), "services=2");
        assert_eq!(Amount::parse("1.5").unwrap().round_up().to_string(), "2");
    }
}
