//! Compiling a schema's rules: kube's CRD-time checks and cost limits
//! (apiextensions `validation.go`, `schema/cel/compilation.go`).

use crate::check::{max_cardinality, render_parse_errors, Checker, Ty};
use crate::schema::{Rule, Schema};
use cel::common::ast::SourceInfo;
use cel::IdedExpr;
use keelson_apimachinery::field::{FieldError, FieldErrorKind};
use serde_json::Value as Json;
use std::sync::Arc;

/// Compile settings.
#[derive(Debug, Clone)]
pub struct CompileOptions {
    /// The field path of the schema in the CRD, e.g.
    /// `spec.validation.openAPIV3Schema` or `spec.versions[0].schema.openAPIV3Schema`.
    pub field_path: String,
    /// Per-expression estimated cost limit.
    pub per_expression_limit: u64,
    /// Whole-schema estimated cost limit.
    pub crd_limit: u64,
    /// Runtime cost limit of one evaluation.
    pub per_call_limit: u64,
    /// Runtime cost budget of one object's validation.
    pub runtime_budget: i64,
}

impl Default for CompileOptions {
    fn default() -> Self {
        CompileOptions {
            field_path: "spec.validation.openAPIV3Schema".into(),
            per_expression_limit: crate::STATIC_ESTIMATED_COST_LIMIT,
            crd_limit: crate::STATIC_ESTIMATED_CRD_COST_LIMIT,
            per_call_limit: crate::PER_CALL_LIMIT,
            runtime_budget: crate::RUNTIME_CEL_COST_BUDGET,
        }
    }
}

/// One compiled rule.
#[derive(Debug)]
pub(crate) struct CompiledRule {
    pub rule: Rule,
    pub program: IdedExpr,
    pub message_expression: Option<IdedExpr>,
    pub uses_old_self: bool,
    /// `fieldPath`, normalized to a field path suffix (`.a.b` → `a.b`).
    pub field_path: Vec<PathElem>,
}

/// A step of a rule's `fieldPath`.
#[derive(Debug, Clone)]
pub(crate) enum PathElem {
    Child(String),
    Key(String),
}

/// A schema node with its compiled rules.
#[derive(Debug)]
pub(crate) struct Node {
    pub schema: Arc<Schema>,
    pub rules: Vec<CompiledRule>,
    pub properties: Vec<(String, Node)>,
    pub items: Option<Box<Node>>,
    pub additional: Option<Box<Node>>,
    /// Whether this node or any below it has rules.
    pub active: bool,
}

/// A schema whose `x-kubernetes-validations` rules are compiled and ready to run.
#[derive(Debug)]
pub struct CompiledSchema {
    pub(crate) root: Node,
    pub(crate) opts: CompileOptions,
}

struct Ctx {
    opts: CompileOptions,
    errors: Vec<FieldError>,
    total: u64,
    /// (path, cost) of rules costing at least 1% of the CRD limit, top 4.
    most_expensive: Vec<(String, u64)>,
}

impl CompiledSchema {
    /// Compiles every rule of `schema` (a structural `openAPIV3Schema`).
    pub fn compile(schema: &Json, opts: CompileOptions) -> Result<CompiledSchema, Vec<FieldError>> {
        let parsed = Arc::new(Schema::from_json(schema));
        let mut ctx = Ctx {
            opts,
            errors: vec![],
            total: 0,
            most_expensive: vec![],
        };
        let base = ctx.opts.field_path.clone();
        let root = compile_node(&mut ctx, parsed, &base, true, Some(1), None);
        if ctx.total > ctx.opts.crd_limit {
            for (path, _) in &ctx.most_expensive {
                ctx.errors.push(FieldError::forbidden(
                    path,
                    "contributed to estimated rule & messageExpression cost total exceeding cost limit for entire OpenAPIv3 schema",
                ));
            }
            ctx.errors.push(FieldError::forbidden(
                &base,
                &cost_message(
                    "x-kubernetes-validations estimated rule & messageExpression cost total for entire OpenAPIv3 schema",
                    ctx.total,
                    ctx.opts.crd_limit,
                ),
            ));
        }
        if ctx.errors.is_empty() {
            Ok(CompiledSchema {
                root,
                opts: ctx.opts,
            })
        } else {
            Err(ctx.errors)
        }
    }

    /// Whether the schema has any rule at all.
    pub fn has_rules(&self) -> bool {
        self.root.active
    }
}

/// kube's `getCostErrorMessage`.
pub fn cost_message(name: &str, cost: u64, limit: u64) -> String {
    let factor = cost as f64 / limit as f64;
    let f = if factor > 100.0 {
        "more than 100x".to_string()
    } else if factor < 1.5 {
        format!("{factor:.6}x")
    } else {
        format!("{factor:.1}x")
    };
    format!("{name} exceeds budget by factor of {f} (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)")
}

/// How many elements a node multiplies its children by (kube's `extractMaxElements`).
fn max_elements(s: &Schema) -> Option<u64> {
    match s.ty.as_str() {
        "object" if s.additional_properties.is_some() => s.max_properties,
        "array" => s.max_items,
        _ => Some(1),
    }
}

fn compile_node(
    ctx: &mut Ctx,
    schema: Arc<Schema>,
    path: &str,
    root: bool,
    cardinality: Option<u64>,
    uncorrelatable: Option<&str>,
) -> Node {
    let mut rules = vec![];
    // kube skips compiling a node's rules when any of them is malformed
    let before = ctx.errors.len();
    let field_paths: Vec<_> = schema
        .rules
        .iter()
        .enumerate()
        .map(|(i, rule)| {
            check_structure(
                ctx,
                &schema,
                rule,
                &format!("{path}.x-kubernetes-validations[{i}]"),
            )
        })
        .collect();
    if ctx.errors.len() == before {
        for ((i, rule), fp) in schema.rules.iter().enumerate().zip(field_paths) {
            let rpath = format!("{path}.x-kubernetes-validations[{i}]");
            if let Some(c) = compile_rule(
                ctx,
                &schema,
                rule,
                &rpath,
                root,
                cardinality,
                uncorrelatable,
                fp,
            ) {
                rules.push(c);
            }
        }
    }
    let child_card = match (cardinality, max_elements(&schema)) {
        (Some(c), Some(m)) => Some(c.saturating_mul(m)),
        _ => None,
    };
    let mut properties = vec![];
    // kube's MapIsCorrelatable: unset, granular and atomic maps correlate by key
    let map_uncorrelatable = !matches!(
        schema.map_type.as_deref(),
        None | Some("granular") | Some("atomic")
    );
    for (name, p) in &schema.properties {
        let ppath = format!("{path}.properties[{name}]");
        let unc = uncorrelatable.or(map_uncorrelatable.then_some(path));
        properties.push((
            name.clone(),
            compile_node(ctx, p.clone(), &ppath, false, child_card, unc),
        ));
    }
    let items = schema.items.clone().map(|i| {
        let unc = if schema.list_type.as_deref() == Some("map") {
            uncorrelatable
        } else {
            uncorrelatable.or(Some(path))
        };
        Box::new(compile_node(
            ctx,
            i,
            &format!("{path}.items"),
            false,
            child_card,
            unc,
        ))
    });
    let additional = schema.additional_properties.clone().map(|a| {
        let unc = uncorrelatable.or(map_uncorrelatable.then_some(path));
        Box::new(compile_node(
            ctx,
            a,
            &format!("{path}.additionalProperties"),
            false,
            child_card,
            unc,
        ))
    });
    let active = !rules.is_empty()
        || properties.iter().any(|(_, n)| n.active)
        || items.as_ref().is_some_and(|n| n.active)
        || additional.as_ref().is_some_and(|n| n.active);
    Node {
        schema,
        rules,
        properties,
        items,
        additional,
        active,
    }
}

fn has_newlines(s: &str) -> bool {
    s.contains(['\n', '\r'])
}

fn parse(src: &str) -> Result<(IdedExpr, SourceInfo), String> {
    crate::macros::parser()
        .parse_with_source_info(src)
        .map_err(|errs| render_parse_errors(src, &errs))
}

/// kube's per-rule shape checks; returns the parsed `fieldPath`.
fn check_structure(ctx: &mut Ctx, schema: &Schema, rule: &Rule, rpath: &str) -> Vec<PathElem> {
    let rule_path = format!("{rpath}.rule");
    let trimmed = rule.rule.trim();
    let trimmed_msg = rule.message.trim();
    if trimmed.is_empty() {
        ctx.errors
            .push(FieldError::required(&rule_path, "rule is not specified"));
    } else if !rule.message.is_empty() && trimmed_msg.is_empty() {
        ctx.errors.push(FieldError::invalid(
            &format!("{rpath}.message"),
            rule.message.as_str(),
            "message must be non-empty if specified",
        ));
    } else if has_newlines(trimmed_msg) {
        ctx.errors.push(FieldError::invalid(
            &format!("{rpath}.message"),
            rule.message.as_str(),
            "message must not contain line breaks",
        ));
    } else if has_newlines(trimmed) && trimmed_msg.is_empty() {
        ctx.errors.push(FieldError::required(
            &format!("{rpath}.message"),
            "message must be specified if rule contains line breaks",
        ));
    }
    if !rule.message_expression.is_empty() && rule.message_expression.trim().is_empty() {
        ctx.errors.push(FieldError::required(
            &format!("{rpath}.messageExpression"),
            "messageExpression must be non-empty if specified",
        ));
    }
    if let Some(reason) = &rule.reason {
        let supported = [
            "FieldValueDuplicate",
            "FieldValueForbidden",
            "FieldValueInvalid",
            "FieldValueRequired",
        ];
        if !supported.contains(&reason.as_str()) {
            ctx.errors.push(FieldError::not_supported(
                &format!("{rpath}.reason"),
                reason.as_str(),
                &supported,
            ));
        }
    }
    let field_path = if rule.field_path.is_empty() {
        vec![]
    } else {
        match parse_field_path(&rule.field_path, schema) {
            Some(p) if !rule.field_path.trim().is_empty() => p,
            _ => {
                let detail = if rule.field_path.trim().is_empty() {
                    "fieldPath must be non-empty if specified"
                } else {
                    "fieldPath must be a valid path"
                };
                ctx.errors.push(FieldError::invalid(
                    &format!("{rpath}.fieldPath"),
                    rule.field_path.as_str(),
                    detail,
                ));
                vec![]
            }
        }
    };
    field_path
}

#[allow(clippy::too_many_arguments)]
fn compile_rule(
    ctx: &mut Ctx,
    schema: &Arc<Schema>,
    rule: &Rule,
    rpath: &str,
    root: bool,
    cardinality: Option<u64>,
    uncorrelatable: Option<&str>,
    field_path: Vec<PathElem>,
) -> Option<CompiledRule> {
    let rule_path = format!("{rpath}.rule");

    let self_ty = Ty::Schema(schema.clone(), root);
    let old_ty = if rule.optional_old_self == Some(true) {
        Ty::Optional(Box::new(self_ty.clone()))
    } else {
        self_ty.clone()
    };
    let vars = vec![
        ("self".to_string(), self_ty),
        ("oldSelf".to_string(), old_ty),
    ];
    let invalid = |detail: String| FieldError {
        kind: FieldErrorKind::Invalid,
        field: rule_path.clone(),
        value: Some(go_rule_value(rule)),
        detail,
    };
    let (program, info) = match parse(&rule.rule) {
        Ok(p) => p,
        Err(e) => {
            ctx.errors.push(invalid(format!("compilation failed: {e}")));
            return None;
        }
    };
    let mut checker = Checker::new(vars.clone());
    let est = checker.check_root(&program);
    if !checker.errors.is_empty() {
        ctx.errors.push(invalid(format!(
            "compilation failed: {}",
            checker.render(&info, &rule.rule)
        )));
        return None;
    }
    if !matches!(est.ty, Ty::Bool | Ty::Dyn)
        && !matches!(&est.ty, Ty::Schema(s, _) if s.ty == "boolean" || s.ty.is_empty())
    {
        ctx.errors
            .push(invalid("cel expression must evaluate to a bool".into()));
        return None;
    }
    let uses_old_self = checker.uses_old_self;
    let card = cardinality.unwrap_or_else(|| max_cardinality(schema));
    let cost = est.cost.max(1).saturating_mul(card);
    if cost > ctx.opts.per_expression_limit {
        ctx.errors.push(FieldError::forbidden(
            &rule_path,
            &cost_message("estimated rule cost", cost, ctx.opts.per_expression_limit),
        ));
    }
    observe(ctx, &rule_path, cost);

    let mut message_expression = None;
    if !rule.message_expression.trim().is_empty() {
        let mpath = format!("{rpath}.messageExpression");
        let minvalid = |detail: String| FieldError {
            kind: FieldErrorKind::Invalid,
            field: mpath.clone(),
            value: Some(go_rule_value(rule)),
            detail,
        };
        match parse(&rule.message_expression) {
            Err(e) => ctx.errors.push(minvalid(format!(
                "messageExpression compilation failed: {e}"
            ))),
            Ok((mexpr, minfo)) => {
                let mut mc = Checker::new(vars);
                let mest = mc.check_root(&mexpr);
                if !mc.errors.is_empty() {
                    ctx.errors.push(minvalid(format!(
                        "messageExpression compilation failed: {}",
                        mc.render(&minfo, &rule.message_expression)
                    )));
                } else if !matches!(mest.ty.clone(), Ty::Str | Ty::Dyn) {
                    ctx.errors.push(minvalid("must evaluate to string".into()));
                } else {
                    let mcost = mest.cost.max(1).saturating_mul(card);
                    if mcost > ctx.opts.per_expression_limit {
                        ctx.errors.push(FieldError::forbidden(
                            &mpath,
                            &cost_message(
                                "estimated messageExpression cost",
                                mcost,
                                ctx.opts.per_expression_limit,
                            ),
                        ));
                    }
                    observe(ctx, &mpath, mcost);
                    message_expression = Some(mexpr);
                }
            }
        }
    }
    if uses_old_self {
        if let Some(unc) = uncorrelatable {
            ctx.errors.push(FieldError::invalid(
                &rule_path,
                rule.rule.as_str(),
                &format!("oldSelf cannot be used on the uncorrelatable portion of the schema within {unc}"),
            ));
        }
    } else if let Some(v) = rule.optional_old_self {
        ctx.errors.push(FieldError::invalid(
            &format!("{rpath}.optionalOldSelf"),
            v,
            "may not be set if oldSelf is not used in rule",
        ));
    }
    Some(CompiledRule {
        rule: rule.clone(),
        program,
        message_expression,
        uses_old_self,
        field_path,
    })
}

/// The rule as kube 1.34 renders it in an `Invalid value`: the internal Go
/// struct (no JSON tags) through `json.Marshal`.
fn go_rule_value(rule: &Rule) -> Json {
    let mut m = serde_json::Map::new();
    m.insert("Rule".into(), Json::from(rule.rule.as_str()));
    m.insert("Message".into(), Json::from(rule.message.as_str()));
    m.insert(
        "MessageExpression".into(),
        Json::from(rule.message_expression.as_str()),
    );
    m.insert(
        "Reason".into(),
        rule.reason.as_deref().map(Json::from).unwrap_or(Json::Null),
    );
    m.insert("FieldPath".into(), Json::from(rule.field_path.as_str()));
    m.insert(
        "OptionalOldSelf".into(),
        rule.optional_old_self.map(Json::from).unwrap_or(Json::Null),
    );
    Json::Object(m)
}

fn observe(ctx: &mut Ctx, path: &str, cost: u64) {
    ctx.total = ctx.total.saturating_add(cost);
    if cost < ctx.opts.crd_limit / 100 {
        return;
    }
    ctx.most_expensive.push((path.to_string(), cost));
    ctx.most_expensive.sort_by_key(|e| std::cmp::Reverse(e.1));
    ctx.most_expensive.truncate(4);
}

/// Parses a rule's `fieldPath` (`.a.b`, `['a.b']`, `.m['key']`) against the schema.
fn parse_field_path(p: &str, schema: &Schema) -> Option<Vec<PathElem>> {
    let mut out = vec![];
    let mut s = schema;
    let mut rest = p.trim();
    while !rest.is_empty() {
        let name;
        if let Some(r) = rest.strip_prefix('.') {
            let end = r.find(['.', '[']).unwrap_or(r.len());
            name = r[..end].to_string();
            rest = &r[end..];
        } else if let Some(r) = rest.strip_prefix("['") {
            let end = r.find("']")?;
            name = r[..end].replace("\\'", "'");
            rest = &r[end + 2..];
        } else {
            return None;
        }
        if name.is_empty() {
            return None;
        }
        if let Some(p) = s.property(&name) {
            out.push(PathElem::Child(name));
            s = p;
        } else if let Some(a) = &s.additional_properties {
            out.push(PathElem::Key(name));
            s = a;
        } else {
            return None;
        }
    }
    Some(out)
}
