//! kube's CustomResourceDefinition validation
//! (`apiextensions-apiserver/pkg/apis/apiextensions/validation`): the
//! rules of a v1 CRD on create and update, with kube's field paths and
//! wording, including the structural-schema rules.

use keelson_apimachinery::names::{is_dns1035_label, is_dns1123_subdomain};
use keelson_apimachinery::{FieldError, FieldErrorKind};
use serde_json::Value;

use crate::crd::{Crd, Names, Version};
use crate::props::{Props, PropsOrBool};

/// The errors of a CRD being created.
pub fn validate_create(crd: &Crd, raw: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let required = format!("{}.{}", crd.spec.names.plural, crd.spec.group);
    if !crd.metadata.name.is_empty() && crd.metadata.name != required {
        errs.push(FieldError::invalid(
            "metadata.name",
            crd.metadata.name.as_str(),
            "must be spec.names.plural+\".\"+spec.group",
        ));
    }
    validate_spec(crd, raw, &mut errs);
    validate_names(
        &crd.status.accepted_names,
        "status.acceptedNames",
        &mut errs,
    );
    errs
}

/// The errors of a CRD update from `old`.
pub fn validate_update(crd: &Crd, raw: &Value, old: &Crd) -> Vec<FieldError> {
    let mut errs = Vec::new();
    validate_spec(crd, raw, &mut errs);
    if old.condition_true("Established") {
        if crd.spec.scope != old.spec.scope {
            errs.push(immutable("spec.scope", &crd.spec.scope));
        }
        if crd.spec.names.kind != old.spec.names.kind {
            errs.push(immutable("spec.names.kind", &crd.spec.names.kind));
        }
    }
    if crd.spec.group != old.spec.group {
        errs.push(immutable("spec.group", &crd.spec.group));
    }
    if crd.spec.names.plural != old.spec.names.plural {
        errs.push(immutable("spec.names.plural", &crd.spec.names.plural));
    }
    validate_names(
        &crd.status.accepted_names,
        "status.acceptedNames",
        &mut errs,
    );
    for (i, v) in crd.status.stored_versions.iter().enumerate() {
        if !crd.spec.versions.iter().any(|x| &x.name == v) {
            errs.push(FieldError::invalid(
                &format!("status.storedVersions[{i}]"),
                v.as_str(),
                "must appear in spec.versions",
            ));
        }
    }
    errs
}

fn immutable(path: &str, v: &str) -> FieldError {
    FieldError::invalid(path, v, "field is immutable")
}

fn validate_spec(crd: &Crd, raw: &Value, errs: &mut Vec<FieldError>) {
    let spec = &crd.spec;
    if spec.group.is_empty() {
        errs.push(FieldError::required("spec.group", ""));
    } else {
        let e = is_dns1123_subdomain(&spec.group);
        if !e.is_empty() {
            errs.push(FieldError::invalid(
                "spec.group",
                spec.group.as_str(),
                &e.join(","),
            ));
        } else if spec.group.split('.').count() < 2 {
            errs.push(FieldError::invalid(
                "spec.group",
                spec.group.as_str(),
                "should be a domain with at least one dot",
            ));
        }
    }
    match spec.scope.as_str() {
        "" => errs.push(FieldError::required("spec.scope", "")),
        "Cluster" | "Namespaced" => {}
        other => errs.push(FieldError::not_supported(
            "spec.scope",
            other,
            &["Cluster", "Namespaced"],
        )),
    }
    let versions_value = raw
        .pointer("/spec/versions")
        .cloned()
        .unwrap_or(Value::Null);
    if spec.versions.is_empty() {
        errs.push(FieldError::required("spec.versions", ""));
    }
    let mut seen: Vec<&str> = Vec::new();
    let mut unique = true;
    for (i, v) in spec.versions.iter().enumerate() {
        if seen.contains(&v.name.as_str()) {
            unique = false;
        }
        seen.push(&v.name);
        let e = is_dns1035_label(&v.name);
        if !e.is_empty() {
            errs.push(FieldError::invalid(
                &format!("spec.versions[{i}].name"),
                v.name.as_str(),
                &e.join(","),
            ));
        }
        validate_version(v, i, errs);
    }
    if errs.is_empty() {
        validate_cel_rules(raw, errs);
    }
    if !unique {
        errs.push(FieldError::invalid(
            "spec.versions",
            versions_value.clone(),
            "must contain unique version names",
        ));
    }
    let storage = spec.versions.iter().filter(|v| v.storage).count();
    if !spec.versions.is_empty() && storage != 1 {
        errs.push(FieldError::invalid(
            "spec.versions",
            versions_value.clone(),
            "must have exactly one version marked as storage version",
        ));
    }
    if !spec.versions.is_empty() && !spec.versions.iter().any(|v| v.served) {
        errs.push(FieldError::invalid(
            "spec.versions",
            versions_value,
            "must have at least one version marked as served",
        ));
    }
    let names = &spec.names;
    for (field, v) in [
        ("plural", &names.plural),
        ("singular", &names.singular),
        ("kind", &names.kind),
        ("listKind", &names.list_kind),
    ] {
        if v.is_empty() {
            errs.push(FieldError::required(&format!("spec.names.{field}"), ""));
        }
    }
    validate_names(names, "spec.names", errs);
    if spec.preserve_unknown_fields {
        errs.push(FieldError::invalid(
            "spec.preserveUnknownFields",
            true,
            "cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead",
        ));
    }
    if let Some(c) = &spec.conversion {
        match c.strategy.as_str() {
            "None" | "" => {
                if c.webhook.is_some() {
                    errs.push(FieldError::forbidden(
                        "spec.conversion.webhook",
                        "should be empty if conversion strategy is not set to Webhook",
                    ));
                }
            }
            "Webhook" => {
                if c.webhook.is_none() {
                    errs.push(FieldError::required(
                        "spec.conversion.webhook",
                        "required if conversion strategy is set to Webhook",
                    ));
                }
            }
            other => errs.push(FieldError::not_supported(
                "spec.conversion.strategy",
                other,
                &["None", "Webhook"],
            )),
        }
    }
}

fn validate_names(names: &Names, path: &str, errs: &mut Vec<FieldError>) {
    let mut check = |field: &str, v: &str, lower: bool| {
        if v.is_empty() {
            return;
        }
        let e = if lower {
            is_dns1035_label(&v.to_lowercase())
        } else {
            is_dns1035_label(v)
        };
        if !e.is_empty() {
            let detail = if lower {
                format!(
                    "may have mixed case, but should otherwise match: {}",
                    e.join(",")
                )
            } else {
                e.join(",")
            };
            errs.push(FieldError::invalid(&format!("{path}.{field}"), v, &detail));
        }
    };
    check("plural", &names.plural, false);
    check("singular", &names.singular, false);
    check("kind", &names.kind, true);
    check("listKind", &names.list_kind, true);
    for (i, s) in names.short_names.iter().enumerate() {
        let e = is_dns1035_label(s);
        if !e.is_empty() {
            errs.push(FieldError::invalid(
                &format!("{path}.shortNames[{i}]"),
                s.as_str(),
                &e.join(","),
            ));
        }
    }
    if !names.kind.is_empty() && names.kind == names.list_kind {
        errs.push(FieldError::invalid(
            &format!("{path}.listKind"),
            names.list_kind.as_str(),
            "kind and listKind may not be the same",
        ));
    }
    for (i, c) in names.categories.iter().enumerate() {
        let e = is_dns1035_label(c);
        if !e.is_empty() {
            errs.push(FieldError::invalid(
                &format!("{path}.categories[{i}]"),
                c.as_str(),
                &e.join(","),
            ));
        }
    }
}

fn validate_version(v: &Version, i: usize, errs: &mut Vec<FieldError>) {
    let base = format!("spec.versions[{i}]");
    match v
        .schema
        .as_ref()
        .and_then(|s| s.open_api_v3_schema.as_ref())
    {
        None => errs.push(FieldError::required(
            &format!("{base}.schema.openAPIV3Schema"),
            "schemas are required",
        )),
        Some(root) => {
            let path = format!("{base}.schema.openAPIV3Schema");
            if root.type_.is_empty() {
                errs.push(FieldError::required(
                    &format!("{path}.type"),
                    "must not be empty at the root",
                ));
            } else if root.type_ != "object" {
                errs.push(FieldError::invalid(
                    &format!("{path}.type"),
                    root.type_.as_str(),
                    "must be object at the root",
                ));
            }
            if let Some(meta) = root.properties.get("metadata") {
                let only_names = meta
                    .properties
                    .keys()
                    .all(|k| k == "name" || k == "generateName");
                if !only_names {
                    errs.push(FieldError::forbidden(
                        &format!("{path}.properties[metadata]"),
                        "must not specify anything other than name and generateName, but metadata is implicitly specified",
                    ));
                }
            }
            structural(root, &path, true, errs);
        }
    }
    if v.deprecation_warning.is_some() && !v.deprecated {
        errs.push(FieldError::invalid(
            &format!("{base}.deprecationWarning"),
            v.deprecation_warning.clone().unwrap_or_default(),
            "can only be set for deprecated versions",
        ));
    }
    for (j, c) in v.additional_printer_columns.iter().enumerate() {
        let cp = format!("{base}.additionalPrinterColumns[{j}]");
        if c.name.is_empty() {
            errs.push(FieldError::required(&format!("{cp}.name"), ""));
        }
        if c.type_.is_empty() {
            errs.push(FieldError::required(&format!("{cp}.type"), ""));
        } else if !matches!(
            c.type_.as_str(),
            "integer" | "number" | "string" | "boolean" | "date"
        ) {
            errs.push(FieldError::not_supported(
                &format!("{cp}.type"),
                c.type_.as_str(),
                &["boolean", "date", "integer", "number", "string"],
            ));
        }
        if c.json_path.is_empty() {
            errs.push(FieldError::required(&format!("{cp}.JSONPath"), ""));
        }
        if c.priority < 0 {
            errs.push(FieldError::invalid(
                &format!("{cp}.priority"),
                c.priority,
                "must be non-negative",
            ));
        }
    }
    if !v.selectable_fields.is_empty() {
        match v
            .schema
            .as_ref()
            .and_then(|s| s.open_api_v3_schema.as_ref())
        {
            Some(root) => validate_selectable_fields(
                &v.selectable_fields,
                root,
                &format!("{base}.selectableFields"),
                errs,
            ),
            None => errs.push(FieldError::invalid(
                &format!("{base}.selectableFields"),
                "",
                "selectableFields may only be set when version.schema.openAPIV3Schema is not included",
            )),
        }
    }
    if let Some(scale) = v.subresources.as_ref().and_then(|s| s.scale.as_ref()) {
        let sp = format!("{base}.subresources.scale");
        if scale.spec_replicas_path.is_empty() {
            errs.push(FieldError::required(&format!("{sp}.specReplicasPath"), ""));
        } else if !scale.spec_replicas_path.starts_with(".spec.") {
            errs.push(FieldError::invalid(
                &format!("{sp}.specReplicasPath"),
                scale.spec_replicas_path.as_str(),
                "should be a json path under .spec",
            ));
        }
        if scale.status_replicas_path.is_empty() {
            errs.push(FieldError::required(
                &format!("{sp}.statusReplicasPath"),
                "",
            ));
        } else if !scale.status_replicas_path.starts_with(".status.") {
            errs.push(FieldError::invalid(
                &format!("{sp}.statusReplicasPath"),
                scale.status_replicas_path.as_str(),
                "should be a json path under .status",
            ));
        }
        if let Some(l) = &scale.label_selector_path {
            if !l.starts_with(".spec.") && !l.starts_with(".status.") {
                errs.push(FieldError::invalid(
                    &format!("{sp}.labelSelectorPath"),
                    l.as_str(),
                    "should be a json path under either .spec or .status",
                ));
            }
        }
    }
}

/// kube's `MaxSelectableFields`.
const MAX_SELECTABLE_FIELDS: usize = 8;

/// `ValidateCustomResourceSelectableFields`: each `jsonPath` resolves in the
/// schema (no array notation), outside `metadata`, to a string, boolean or
/// integer; no duplicates; at most eight.
fn validate_selectable_fields(
    fields: &[Value],
    root: &Props,
    path: &str,
    errs: &mut Vec<FieldError>,
) {
    let mut unique: Vec<String> = Vec::new();
    for (i, f) in fields.iter().enumerate() {
        let fp = format!("{path}[{i}].jsonPath");
        let json_path = f.get("jsonPath").and_then(Value::as_str).unwrap_or("");
        if json_path.is_empty() {
            errs.push(FieldError::required(&fp, ""));
            continue;
        }
        let (elems, found) = match valid_field_path(json_path, root) {
            Ok(r) => r,
            Err(e) => {
                errs.push(FieldError::invalid(
                    &fp,
                    json_path,
                    &format!("is an invalid path: {e}"),
                ));
                continue;
            }
        };
        if elems.first().map(|(n, _)| n.as_str()) == Some("metadata") {
            errs.push(FieldError::invalid(
                &fp,
                json_path,
                "must not point to fields in metadata",
            ));
        }
        if !matches!(found.type_.as_str(), "string" | "boolean" | "integer") {
            errs.push(FieldError::invalid(
                &fp,
                json_path,
                "must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.",
            ));
        }
        // field.Path's String(): children joined by dots, keys in brackets.
        let mut key = String::new();
        for (n, named) in &elems {
            if *named {
                if !key.is_empty() {
                    key.push('.');
                }
                key.push_str(n);
            } else {
                key.push_str(&format!("[{n}]"));
            }
        }
        if unique.contains(&key) {
            errs.push(FieldError {
                kind: FieldErrorKind::Duplicate,
                field: fp,
                value: Some(Value::from(json_path)),
                detail: String::new(),
            });
        } else {
            unique.push(key);
        }
    }
    if unique.len() > MAX_SELECTABLE_FIELDS {
        errs.push(FieldError {
            kind: FieldErrorKind::TooMany,
            field: path.to_string(),
            value: Some(Value::from(unique.len())),
            detail: format!("must have at most {MAX_SELECTABLE_FIELDS} items"),
        });
    }
}

/// One step of a field path: the name, and whether it is a property
/// (rather than a map key).
type PathElement = (String, bool);

/// kube's `cel.ValidFieldPath` without array notation: the path's elements
/// (name, whether it is a property rather than a map key) and the schema
/// it reaches, or the error kube words.
fn valid_field_path<'a>(
    json_path: &str,
    root: &'a Props,
) -> Result<(Vec<PathElement>, &'a Props), String> {
    let mut tokens = Vec::new();
    let mut rest = json_path;
    while !rest.is_empty() {
        let len = if rest.starts_with('\'') {
            // A quoted string runs to the next unescaped quote.
            let b = rest.as_bytes();
            (1..b.len())
                .find(|&i| b[i] == b'\'' && b[i - 1] != b'\\')
                .map_or(rest.len(), |i| i + 1)
        } else if rest.starts_with(['.', '[', ']']) {
            1
        } else {
            rest.find(['.', '[', ']']).unwrap_or(rest.len())
        };
        tokens.push(&rest[..len]);
        rest = &rest[len..];
    }
    let mut elems = Vec::new();
    let mut schema = root;
    let mut it = tokens.into_iter();
    while let Some(tok) = it.next() {
        match tok {
            "[" => return Err("array notation is not allowed".into()),
            "." => {
                let Some(name) = it.next() else {
                    return Err("unexpected end of JSON path".into());
                };
                if !schema.properties.is_empty() {
                    match schema.properties.get(name) {
                        Some(p) => schema = p,
                        None => return Err("does not refer to a valid field".into()),
                    }
                    elems.push((name.to_string(), true));
                } else if let Some(a) = schema.additional_schema() {
                    schema = a;
                    elems.push((name.to_string(), false));
                } else {
                    return Err("does not refer to a valid field".into());
                }
            }
            other => return Err(format!("expected [ or . but got: {other}")),
        }
    }
    Ok((elems, schema))
}

/// The structural-schema rules and the per-node OpenAPI restrictions.
fn structural(s: &Props, path: &str, root: bool, errs: &mut Vec<FieldError>) {
    if s.reference.is_some() {
        errs.push(FieldError::forbidden(
            &format!("{path}.$ref"),
            "$ref is not supported",
        ));
    }
    if s.unique_items {
        errs.push(FieldError::forbidden(
            &format!("{path}.uniqueItems"),
            "uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
        ));
    }
    if s.preserve_unknown_fields == Some(false) {
        errs.push(FieldError::invalid(
            &format!("{path}.x-kubernetes-preserve-unknown-fields"),
            false,
            "must be true or undefined",
        ));
    }
    if s.int_or_string && !s.type_.is_empty() {
        errs.push(FieldError::invalid(
            &format!("{path}.type"),
            s.type_.as_str(),
            "must be empty if x-kubernetes-int-or-string is true",
        ));
    }
    if s.embedded_resource && s.type_ != "object" {
        errs.push(FieldError::invalid(
            &format!("{path}.type"),
            s.type_.as_str(),
            "must be object if x-kubernetes-embedded-resource is true",
        ));
    }
    if s.additional_properties.is_some() && !s.properties.is_empty() {
        errs.push(FieldError::forbidden(
            &format!("{path}.additionalProperties"),
            "additionalProperties and properties are mutual exclusive",
        ));
    }
    if matches!(s.additional_properties, Some(PropsOrBool::Bool(false))) {
        errs.push(FieldError::forbidden(
            &format!("{path}.additionalProperties"),
            "must not be false",
        ));
    }
    if let Some(lt) = s.list_type.as_deref() {
        if !matches!(lt, "atomic" | "set" | "map") {
            errs.push(FieldError::not_supported(
                &format!("{path}.x-kubernetes-list-type"),
                lt,
                &["atomic", "set", "map"],
            ));
        }
        if s.type_ != "array" {
            errs.push(FieldError::invalid(
                &format!("{path}.type"),
                s.type_.as_str(),
                "must be array if x-kubernetes-list-type is specified",
            ));
        }
        if lt == "map" && s.list_map_keys.is_empty() {
            errs.push(FieldError::required(
                &format!("{path}.x-kubernetes-list-map-keys"),
                "must not be empty if x-kubernetes-list-type is map",
            ));
        }
    }
    if !s.list_map_keys.is_empty() && s.list_type.as_deref() != Some("map") {
        errs.push(FieldError::forbidden(
            &format!("{path}.x-kubernetes-list-map-keys"),
            "must be empty if x-kubernetes-list-type is not map",
        ));
    }
    if let Some(mt) = s.map_type.as_deref() {
        if !matches!(mt, "atomic" | "granular") {
            errs.push(FieldError::not_supported(
                &format!("{path}.x-kubernetes-map-type"),
                mt,
                &["granular", "atomic"],
            ));
        }
    }
    if !s.pattern.is_empty() {
        if let Err(e) = regex::Regex::new(&s.pattern) {
            errs.push(FieldError::invalid(
                &format!("{path}.pattern"),
                s.pattern.as_str(),
                &format!("must be a valid regular expression, but isn't: {e}"),
            ));
        }
    }
    if s.type_ == "array" && s.items.is_none() {
        errs.push(FieldError::required(
            &format!("{path}.items"),
            "must be specified",
        ));
    }
    for (k, p) in &s.properties {
        let cp = format!("{path}.properties[{k}]");
        if p.type_.is_empty() && !p.int_or_string && !p.preserves_unknown() {
            errs.push(FieldError::required(
                &format!("{cp}.type"),
                "must not be empty for specified object fields",
            ));
        }
        if root && k == "metadata" {
            continue;
        }
        structural(p, &cp, false, errs);
    }
    if let Some(items) = s.items.as_deref() {
        let ip = format!("{path}.items");
        if items.type_.is_empty() && !items.int_or_string && !items.preserves_unknown() {
            errs.push(FieldError::required(
                &format!("{ip}.type"),
                "must not be empty for specified array items",
            ));
        }
        structural(items, &ip, false, errs);
    }
    if let Some(a) = s.additional_schema() {
        let ap = format!("{path}.additionalProperties");
        if a.type_.is_empty() && !a.int_or_string && !a.preserves_unknown() {
            errs.push(FieldError::required(
                &format!("{ap}.type"),
                "must not be empty for specified additionalProperties",
            ));
        }
        structural(a, &ap, false, errs);
    }
    if let Some(d) = &s.default {
        if root {
            errs.push(FieldError::forbidden(
                &format!("{path}.default"),
                "must not be set at the root",
            ));
        } else if !d.is_null() || !s.nullable {
            let mut dd = d.clone();
            let compiled = crate::values::Compiled::new(Props {
                type_: "object".into(),
                properties: [("v".to_string(), s.clone())].into_iter().collect(),
                ..Props::default()
            });
            let mut wrapper = serde_json::json!({ "v": dd.take() });
            let pruned = compiled.prune(&mut wrapper);
            for p in pruned {
                errs.push(FieldError {
                    kind: FieldErrorKind::Invalid,
                    field: format!("{path}.default"),
                    value: Some(d.clone()),
                    detail: format!(
                        "must not have unknown fields: {}",
                        p.trim_start_matches("v.")
                    ),
                });
            }
            for e in compiled.validate(&wrapper) {
                let field = e.field.replacen('v', &format!("{path}.default"), 1);
                errs.push(FieldError { field, ..e });
            }
        }
    }
}

/// Compile every version's `x-kubernetes-validations` rules (kube does it
/// once the schemas are structural): syntax and type errors and the
/// estimated-cost limits, at kube's paths. Versions that share one schema
/// are reported once under `spec.validation.openAPIV3Schema`, as kube's
/// internal form hoists a shared schema there.
fn validate_cel_rules(raw: &Value, errs: &mut Vec<FieldError>) {
    let schemas: Vec<Option<&Value>> = raw
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .map(|vs| {
            vs.iter()
                .map(|v| v.pointer("/schema/openAPIV3Schema"))
                .collect()
        })
        .unwrap_or_default();
    let shared = schemas
        .first()
        .copied()
        .flatten()
        .filter(|first| schemas.len() > 1 && schemas.iter().all(|s| s == &Some(*first)));
    let compile = |schema: &Value, field_path: String, errs: &mut Vec<FieldError>| {
        let opts = keelson_cel::CompileOptions {
            field_path,
            ..Default::default()
        };
        if let Err(e) = keelson_cel::CompiledSchema::compile(schema, opts) {
            errs.extend(e);
        }
    };
    match shared {
        Some(schema) => compile(schema, "spec.validation.openAPIV3Schema".into(), errs),
        None if schemas.len() == 1 => {
            if let Some(schema) = schemas[0] {
                compile(schema, "spec.validation.openAPIV3Schema".into(), errs);
            }
        }
        None => {
            for (i, schema) in schemas.iter().enumerate() {
                if let Some(schema) = schema {
                    compile(
                        schema,
                        format!("spec.versions[{i}].schema.openAPIV3Schema"),
                        errs,
                    );
                }
            }
        }
    }
}
