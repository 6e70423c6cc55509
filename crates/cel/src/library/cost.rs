//! The cost of one function call, shared by the runtime tracker (actual
//! sizes) and the compile-time estimator (worst-case sizes): cel-go's
//! `costCall` for the standard library and kube's `library/cost.go` for
//! its libraries, approximated where noted.

use cel::common::ast::operators as ops;

/// `ceil(n * 0.1)`: cel-go's `StringTraversalCostFactor`.
pub fn traversal(n: u64) -> u64 {
    n.div_ceil(10)
}

/// `ceil(n * 0.25)`: cel-go's `RegexStringLengthCostFactor`.
fn regex_len(n: u64) -> u64 {
    n.div_ceil(4)
}

/// Whether the call's operands are strings or bytes (only those traverse).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Text,
    List,
    Other,
}

/// The cost of calling `name`; `sizes`/`kinds` describe the receiver (for a
/// member call) then the arguments.
pub fn call(name: &str, sizes: &[u64], kinds: &[Kind]) -> u64 {
    let size = |i: usize| sizes.get(i).copied().unwrap_or(1);
    let kind = |i: usize| kinds.get(i).copied().unwrap_or(Kind::Other);
    match name {
        // cel-go's O(n) standard functions
        "startsWith" | "endsWith" | "bytes" | "strings.quote" | "jsonpatch.escapeKey" => {
            traversal(size(0))
        }
        // cel-go's ExtFormatString: a traversal of the format string
        "format" if kind(0) == Kind::Text => traversal(size(0)),
        // kube charges join by its result: see lists::call and the checker
        "join" => 0,
        // kube's library functions that traverse their string once
        "lowerAscii" | "upperAscii" | "trim" | "substring" | "charAt" | "reverse" | "url"
        | "isURL" | "ip" | "isIP" | "cidr" | "isCIDR" | "quantity" | "isQuantity" | "semver"
        | "isSemver" | "ip.isCanonical" => traversal(size(0)).max(1),
        // equality traverses the shorter operand (scalars have size 1)
        ops::EQUALS | ops::NOT_EQUALS => traversal(size(0).min(size(1))),
        ops::LESS | ops::LESS_EQUALS | ops::GREATER | ops::GREATER_EQUALS
            if kind(0) == Kind::Text =>
        {
            traversal(size(0).min(size(1)))
        }
        ops::IN if kind(1) == Kind::List => size(1),
        ops::ADD if kind(0) == Kind::Text => traversal(size(0).saturating_add(size(1))),
        "matches" | "find" | "findAll" => {
            traversal(size(0).saturating_add(1)).saturating_mul(regex_len(size(1)))
        }
        "contains" if kind(0) == Kind::Text => {
            traversal(size(0)).saturating_mul(traversal(size(1)))
        }
        "replace" | "split" | "indexOf" | "lastIndexOf" if kind(0) == Kind::Text => {
            traversal(size(0)).saturating_mul(traversal(size(1)).max(1))
        }
        "isSorted" | "sum" | "min" | "max" | "indexOf" | "lastIndexOf" => size(0).max(1),
        // kube: a fixed cost per authorization check
        "check" => super::authz::CHECK_COST,
        "sets.contains" | "sets.equivalent" | "sets.intersects" => {
            size(0).saturating_mul(size(1)).max(1)
        }
        _ => 1,
    }
}
