//! Kubernetes URL, IP and CIDR libraries, on the `url` and `ipnet` crates.

use super::no_overload;
use crate::eval::{EvalError, EvalResult};
use crate::value::Value;
use std::net::IpAddr;
use std::sync::Arc;

fn parse_ip(s: &str) -> Option<IpAddr> {
    // kube rejects IPv4-mapped IPv6 and zones
    if s.contains('%') {
        return None;
    }
    let ip: IpAddr = s.parse().ok()?;
    if let IpAddr::V6(v6) = ip {
        if v6.to_ipv4_mapped().is_some() && s.contains('.') {
            return None;
        }
    }
    Some(ip)
}

/// `url()`, `isURL()`, `ip()`, `isIP()`, `cidr()`, `isCIDR()`, `ip.isCanonical()`.
pub fn global(name: &str, x: Value) -> EvalResult {
    let Value::Str(s) = x else {
        return Err(no_overload());
    };
    match name {
        "url" | "isURL" => {
            // kube accepts absolute URLs and absolute paths (url.ParseRequestURI)
            let parsed = if s.starts_with('/') {
                url::Url::parse(&format!("http://placeholder{s}"))
                    .ok()
                    .map(|_| None)
            } else {
                url::Url::parse(&s).ok().map(Some)
            };
            if name == "isURL" {
                return Ok(Value::Bool(parsed.is_some()));
            }
            match parsed {
                Some(Some(u)) => Ok(Value::Url(Arc::new(u))),
                Some(None) => Err(EvalError::msg("relative URLs are not supported")),
                None => Err(EvalError::msg(format!("URL parse error during conversion from string: parse {s:?}: invalid URI for request"))),
            }
        }
        "ip" | "isIP" => {
            let ip = parse_ip(&s);
            if name == "isIP" {
                return Ok(Value::Bool(ip.is_some()));
            }
            ip.map(Value::Ip)
                .ok_or_else(|| EvalError::msg(format!("network address parse error during conversion from string: ParseAddr({s:?}): unable to parse IP")))
        }
        "ip.isCanonical" => {
            let ip = parse_ip(&s).ok_or_else(|| EvalError::msg("invalid ip"))?;
            Ok(Value::Bool(ip.to_string() == *s))
        }
        _ => {
            let c = s.parse::<ipnet::IpNet>().ok();
            if name == "isCIDR" {
                return Ok(Value::Bool(c.is_some()));
            }
            c.map(Value::Cidr)
                .ok_or_else(|| EvalError::msg(format!("network address parse error during conversion from string: netip.ParsePrefix({s:?}): bad prefix")))
        }
    }
}

/// Member functions of URL, IP and CIDR values.
pub fn call(name: &str, target: Value, args: Vec<Value>) -> EvalResult {
    match (&target, name, args.first()) {
        (Value::Url(u), "getScheme", None) => Ok(Value::str(u.scheme())),
        (Value::Url(u), "getHost", None) => Ok(Value::str(match (u.host_str(), u.port()) {
            (Some(h), Some(p)) => format!("{h}:{p}"),
            (Some(h), None) => h.to_string(),
            _ => String::new(),
        })),
        (Value::Url(u), "getHostname", None) => Ok(Value::str(
            u.host_str()
                .unwrap_or("")
                .trim_start_matches('[')
                .trim_end_matches(']'),
        )),
        (Value::Url(u), "getPort", None) => Ok(Value::str(
            u.port().map(|p| p.to_string()).unwrap_or_default(),
        )),
        (Value::Url(u), "getEscapedPath", None) => Ok(Value::str(u.path())),
        (Value::Url(u), "getQuery", None) => {
            let mut m = crate::value::MapData::new();
            for (k, v) in u.query_pairs() {
                let key = crate::value::Key::Str(k.as_ref().into());
                let entry = m.entry(key).or_insert_with(|| Value::list(vec![]));
                if let Value::List(l, _) = entry {
                    Arc::make_mut(l).push(Value::str(v.as_ref()));
                }
            }
            Ok(Value::Map(Arc::new(m), false))
        }
        (Value::Ip(ip), "family", None) => Ok(Value::Int(if ip.is_ipv4() { 4 } else { 6 })),
        (Value::Ip(ip), "isUnspecified", None) => Ok(Value::Bool(ip.is_unspecified())),
        (Value::Ip(ip), "isLoopback", None) => Ok(Value::Bool(ip.is_loopback())),
        (Value::Ip(ip), "isLinkLocalMulticast", None) => Ok(Value::Bool(match ip {
            IpAddr::V4(v) => v.octets()[..3] == [224, 0, 0],
            IpAddr::V6(v) => v.segments()[0] & 0xff0f == 0xff02,
        })),
        (Value::Ip(ip), "isLinkLocalUnicast", None) => Ok(Value::Bool(match ip {
            IpAddr::V4(v) => v.is_link_local(),
            IpAddr::V6(v) => v.segments()[0] & 0xffc0 == 0xfe80,
        })),
        (Value::Ip(ip), "isGlobalUnicast", None) => Ok(Value::Bool(match ip {
            IpAddr::V4(v) => {
                !(v.is_unspecified()
                    || v.is_loopback()
                    || v.is_multicast()
                    || v.is_broadcast()
                    || v.is_link_local())
            }
            IpAddr::V6(v) => {
                !(v.is_unspecified()
                    || v.is_loopback()
                    || v.is_multicast()
                    || v.segments()[0] & 0xffc0 == 0xfe80)
            }
        })),
        (Value::Cidr(c), "containsIP", Some(arg)) => {
            let ip = match arg {
                Value::Ip(ip) => *ip,
                Value::Str(s) => parse_ip(s).ok_or_else(|| EvalError::msg("invalid ip"))?,
                _ => return Err(no_overload()),
            };
            Ok(Value::Bool(c.contains(&ip)))
        }
        (Value::Cidr(c), "containsCIDR", Some(arg)) => {
            let other = match arg {
                Value::Cidr(o) => *o,
                Value::Str(s) => s
                    .parse::<ipnet::IpNet>()
                    .map_err(|_| EvalError::msg("invalid cidr"))?,
                _ => return Err(no_overload()),
            };
            Ok(Value::Bool(c.contains(&other)))
        }
        (Value::Cidr(c), "ip", None) => Ok(Value::Ip(c.addr())),
        (Value::Cidr(c), "masked", None) => Ok(Value::Cidr(c.trunc())),
        (Value::Cidr(c), "prefixLength", None) => Ok(Value::Int(c.prefix_len() as i64)),
        _ => Err(EvalError::msg(format!(
            "no such overload: {}.{name}",
            target.type_name()
        ))),
    }
}
