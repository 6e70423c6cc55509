//! The shape of the rule tables `cargo xtask gen-validation` writes into
//! `generated.rs` from `rules/*.rules`: one [`KindRules`] per kind, one
//! [`Rule`] per field line, the field's `+k8s:` tags as [`Tag`]s.

/// The rules of one kind.
#[derive(Debug)]
pub(crate) struct KindRules {
    /// API group (`""` for core).
    pub group: &'static str,
    /// API version the tags are declared on (`v1`).
    pub version: &'static str,
    /// Kind.
    pub kind: &'static str,
    /// `+k8s:supportsSubresource`: the subresources validated declaratively
    /// (`/status`, `/scale`); a write of any other is not.
    pub subresources: &'static [&'static str],
    /// The field rules, in the rule file's order.
    pub rules: &'static [Rule],
}

/// The tags of one field.
#[derive(Debug)]
pub(crate) struct Rule {
    /// `+k8s:isSubresource` scope: `""` for the root resource, or `/status`.
    pub subresource: &'static str,
    /// JSON field names from the object root (`["spec", "replicas"]`).
    pub path: &'static [&'static str],
    /// The tags, in the order written.
    pub tags: &'static [Tag],
}

/// A literal in a tag (`+k8s:neq=0`, `+k8s:item(type: "Approved")`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Lit {
    Str(&'static str),
    Int(i64),
    Bool(bool),
}

/// `+k8s:format` payloads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    /// `k8s-ip`: an IPv4 (octets may have leading zeros) or IPv6 address.
    Ip,
    /// `k8s-long-name`: a DNS subdomain.
    LongName,
    /// `k8s-short-name`: a DNS label.
    ShortName,
    /// `k8s-label-key`: a label key (qualified name).
    LabelKey,
}

/// `+k8s:listType` payloads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ListType {
    Atomic,
    Set,
    Map,
}

/// One `+k8s:` tag of a field.
#[derive(Debug)]
pub(crate) enum Tag {
    /// `+k8s:optional`: unset is valid and ends the field's checks.
    Optional,
    /// `+k8s:required`: unset is `Required value`.
    Required,
    /// `+k8s:forbidden`: set is `Forbidden`.
    Forbidden,
    /// `+k8s:minimum=N`.
    Minimum(i64),
    /// `+k8s:maxLength=N` (bytes).
    MaxLength(usize),
    /// `+k8s:maxItems=N`.
    MaxItems(usize),
    /// `+k8s:enum`: the type's constants.
    Enum(&'static [&'static str]),
    /// `+k8s:neq=V`.
    Neq(Lit),
    /// `+k8s:format=F`.
    Format(Format),
    /// `+k8s:immutable`: an update may not change the field.
    Immutable,
    /// `+k8s:listType=T`.
    ListType(ListType),
    /// `+k8s:listMapKey=K`.
    ListMapKey(&'static str),
    /// `+k8s:eachVal=<tag>`: each list item or map value.
    EachVal(&'static [Tag]),
    /// `+k8s:eachKey=<tag>`: each map key.
    EachKey(&'static [Tag]),
    /// `+k8s:item(k: v, ...)=<tag>`: the list-map item with these keys.
    Item(&'static [(&'static str, Lit)], &'static [Tag]),
    /// `+k8s:subfield("f")=<tag>`.
    Subfield(&'static str, &'static [Tag]),
    /// `+k8s:ifEnabled("Gate")=<tag>`.
    IfEnabled(&'static str, &'static [Tag]),
    /// `+k8s:ifDisabled("Gate")=<tag>`.
    IfDisabled(&'static str, &'static [Tag]),
    /// `+k8s:opaqueType`: rules under this field are not applied.
    OpaqueType,
    /// `+k8s:unionDiscriminator(union: "u")`.
    UnionDiscriminator { union: &'static str },
    /// `+k8s:unionMember(union: "u", memberName: "M")`.
    UnionMember {
        union: &'static str,
        member: &'static str,
    },
    /// `+k8s:zeroOrOneOfMember(union: "u", memberName: "M")`.
    ZeroOrOneOfMember {
        union: &'static str,
        member: &'static str,
    },
}
