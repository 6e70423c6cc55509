//! AdmissionApi over gRPC: every request field crosses the wire unchanged.

mod support;

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use keelson_api::{
    AdmissionApi, AdmissionRequest, AdmissionResponse, AdmitPhase, FieldValidation, Operation,
};
use keelson_apimachinery::{ApiError, ApiResult, FieldError, GroupResource};
use keelson_rpc::{AdmissionGrpc, RemoteAdmission};
use serde_json::json;
use tonic::transport::Server;

/// Records the request; defaults `metadata.labels.admitted` (answering the
/// object as sent as the unmutated one); rejects the
/// name "bad" with a 422.
#[derive(Default)]
struct FakeAdmission {
    seen: Mutex<Vec<AdmissionRequest>>,
    phases: Mutex<Vec<AdmitPhase>>,
}

#[async_trait]
impl AdmissionApi for FakeAdmission {
    async fn admit_phase(
        &self,
        req: AdmissionRequest,
        phase: AdmitPhase,
    ) -> ApiResult<AdmissionResponse> {
        self.seen.lock().unwrap().push(req.clone());
        self.phases.lock().unwrap().push(phase);
        if req.name == "bad" {
            let errs = [FieldError::invalid("metadata.name", "bad", "is bad")];
            return Err(ApiError::invalid("", &req.kind, &req.name, &errs));
        }
        let unmutated = req.object.clone();
        let object = req.object.map(|mut o| {
            o["metadata"]["labels"]["admitted"] = json!("yes");
            o
        });
        Ok(AdmissionResponse {
            object,
            unmutated,
            warnings: vec!["unknown field \"spec.foo\"".into(), "second".into()],
            audit_annotations: [(
                "pod-security.kubernetes.io/enforce-policy".to_string(),
                "restricted:latest".to_string(),
            )]
            .into(),
        })
    }
}

fn request(op: Operation, fv: FieldValidation) -> AdmissionRequest {
    AdmissionRequest {
        operation: op,
        gr: GroupResource::new("apps", "deployments"),
        api_version: "apps/v1".into(),
        kind: "Deployment".into(),
        kind_api_version: String::new(),
        namespace: "default".into(),
        name: "web".into(),
        subresource: String::new(),
        object: Some(json!({"metadata": {"name": "web"}, "spec": {"replicas": 1}})),
        old_object: None,
        raw_body: Some(br#"{"metadata":{"name":"web","name":"dup"}}"#.to_vec()),
        is_patch: false,
        field_validation: fv,
        dry_run: false,
        user: None,
        options: None,
    }
}

#[tokio::test]
async fn requests_and_responses_round_trip_exactly() {
    let fake = Arc::new(FakeAdmission::default());
    let server = support::start(
        Server::builder().add_service(AdmissionGrpc::server(fake.clone())),
        None,
    )
    .await;
    let adm = RemoteAdmission::connect_lazy(&server.endpoint()).unwrap();

    let mut sent = vec![
        request(Operation::Create, FieldValidation::Strict),
        request(Operation::Update, FieldValidation::Ignore),
        request(Operation::Delete, FieldValidation::Warn),
    ];
    sent[1].old_object = Some(json!({"metadata": {"name": "web", "resourceVersion": "4"}}));
    sent[1].subresource = "status".into();
    sent[1].is_patch = true;
    sent[1].raw_body = None;
    sent[1].dry_run = true;
    sent[1].user = Some(keelson_api::UserInfo {
        username: "alice".into(),
        uid: "u-1".into(),
        groups: vec!["dev".into(), "system:authenticated".into()],
        extra: [("scopes".to_string(), vec!["a".to_string(), "b".to_string()])].into(),
    });
    sent[1].options =
        Some(json!({"kind": "UpdateOptions", "apiVersion": "meta.k8s.io/v1", "dryRun": ["All"]}));
    sent[2].object = None;
    sent[2].raw_body = Some(Vec::new());
    sent[2].namespace = String::new();

    let phases = [
        AdmitPhase::All,
        AdmitPhase::Mutating,
        AdmitPhase::Validating,
    ];
    for (req, phase) in sent.iter().zip(phases) {
        let resp = adm.admit_phase(req.clone(), phase).await.unwrap();
        assert_eq!(resp.warnings, ["unknown field \"spec.foo\"", "second"]);
        assert_eq!(
            resp.audit_annotations["pod-security.kubernetes.io/enforce-policy"],
            "restricted:latest"
        );
        match &req.object {
            Some(_) => assert_eq!(
                resp.object.unwrap()["metadata"]["labels"]["admitted"],
                "yes"
            ),
            None => assert_eq!(resp.object, None),
        }
        // The object before mutation comes back as it was sent.
        assert_eq!(resp.unmutated, req.object);
    }
    // Some(empty body) stays distinct from None.
    assert_eq!(*fake.seen.lock().unwrap(), sent);
    assert_eq!(*fake.phases.lock().unwrap(), phases);
    adm.ready().await.unwrap();
    server.stop().await;
}

#[tokio::test]
async fn a_rejection_arrives_identical() {
    let server = support::start(
        Server::builder().add_service(AdmissionGrpc::server(Arc::new(FakeAdmission::default()))),
        None,
    )
    .await;
    let adm = RemoteAdmission::connect_lazy(&server.endpoint()).unwrap();
    let mut req = request(Operation::Create, FieldValidation::Strict);
    req.name = "bad".into();
    let err = adm.admit(req).await.unwrap_err();
    let errs = [FieldError::invalid("metadata.name", "bad", "is bad")];
    assert_eq!(err, ApiError::invalid("", "Deployment", "bad", &errs));
    assert_eq!(
        err.message,
        "Deployment \"bad\" is invalid: metadata.name: Invalid value: \"bad\": is bad"
    );
    server.stop().await;
}

#[tokio::test]
async fn a_down_admission_service_is_a_503() {
    let adm = RemoteAdmission::connect_lazy(&support::dead_endpoint().await).unwrap();
    let err = adm
        .admit(request(Operation::Create, FieldValidation::Warn))
        .await
        .unwrap_err();
    assert_eq!(err.code, 503);
    assert!(
        err.message
            .starts_with("the admission service is unavailable"),
        "{}",
        err.message
    );
    assert_eq!(adm.ready().await.unwrap_err().code, 503);
}
