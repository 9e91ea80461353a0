//! Protobuf decoding and encoding against bodies captured from kubectl.

use serde_json::json;

use super::*;

/// `kubectl auth can-i get pods` (kubectl v1.32, namespace `default`), as sent on the wire.
const CAN_I_GET_PODS: &[u8] = &[
    0x6b, 0x38, 0x73, 0x00, 0x0a, 0x32, 0x0a, 0x17, 0x61, 0x75, 0x74, 0x68, 0x6f, 0x72, 0x69, 0x7a,
    0x61, 0x74, 0x69, 0x6f, 0x6e, 0x2e, 0x6b, 0x38, 0x73, 0x2e, 0x69, 0x6f, 0x2f, 0x76, 0x31, 0x12,
    0x17, 0x53, 0x65, 0x6c, 0x66, 0x53, 0x75, 0x62, 0x6a, 0x65, 0x63, 0x74, 0x41, 0x63, 0x63, 0x65,
    0x73, 0x73, 0x52, 0x65, 0x76, 0x69, 0x65, 0x77, 0x12, 0x3c, 0x0a, 0x10, 0x0a, 0x00, 0x12, 0x00,
    0x1a, 0x00, 0x22, 0x00, 0x2a, 0x00, 0x32, 0x00, 0x38, 0x00, 0x42, 0x00, 0x12, 0x1e, 0x0a, 0x1c,
    0x0a, 0x07, 0x64, 0x65, 0x66, 0x61, 0x75, 0x6c, 0x74, 0x12, 0x03, 0x67, 0x65, 0x74, 0x1a, 0x00,
    0x22, 0x00, 0x2a, 0x04, 0x70, 0x6f, 0x64, 0x73, 0x32, 0x00, 0x3a, 0x00, 0x1a, 0x08, 0x08, 0x00,
    0x12, 0x00, 0x1a, 0x00, 0x20, 0x00, 0x1a, 0x00, 0x22, 0x00,
];

/// `kubectl auth can-i create deployments.apps/scale --subresource=status -n kube-system`.
const CAN_I_CREATE_DEPLOYMENT_STATUS: &[u8] = &[
    0x6b, 0x38, 0x73, 0x00, 0x0a, 0x32, 0x0a, 0x17, 0x61, 0x75, 0x74, 0x68, 0x6f, 0x72, 0x69, 0x7a,
    0x61, 0x74, 0x69, 0x6f, 0x6e, 0x2e, 0x6b, 0x38, 0x73, 0x2e, 0x69, 0x6f, 0x2f, 0x76, 0x31, 0x12,
    0x17, 0x53, 0x65, 0x6c, 0x66, 0x53, 0x75, 0x62, 0x6a, 0x65, 0x63, 0x74, 0x41, 0x63, 0x63, 0x65,
    0x73, 0x73, 0x52, 0x65, 0x76, 0x69, 0x65, 0x77, 0x12, 0x59, 0x0a, 0x10, 0x0a, 0x00, 0x12, 0x00,
    0x1a, 0x00, 0x22, 0x00, 0x2a, 0x00, 0x32, 0x00, 0x38, 0x00, 0x42, 0x00, 0x12, 0x3b, 0x0a, 0x39,
    0x0a, 0x0b, 0x6b, 0x75, 0x62, 0x65, 0x2d, 0x73, 0x79, 0x73, 0x74, 0x65, 0x6d, 0x12, 0x06, 0x63,
    0x72, 0x65, 0x61, 0x74, 0x65, 0x1a, 0x04, 0x61, 0x70, 0x70, 0x73, 0x22, 0x00, 0x2a, 0x0b, 0x64,
    0x65, 0x70, 0x6c, 0x6f, 0x79, 0x6d, 0x65, 0x6e, 0x74, 0x73, 0x32, 0x06, 0x73, 0x74, 0x61, 0x74,
    0x75, 0x73, 0x3a, 0x05, 0x73, 0x63, 0x61, 0x6c, 0x65, 0x1a, 0x08, 0x08, 0x00, 0x12, 0x00, 0x1a,
    0x00, 0x20, 0x00, 0x1a, 0x00, 0x22, 0x00,
];

/// `kubectl auth can-i --list -n default` (kubectl v1.32), as sent on the wire.
const CAN_I_LIST: &[u8] = &[
    0x6b, 0x38, 0x73, 0x00, 0x0a, 0x31, 0x0a, 0x17, 0x61, 0x75, 0x74, 0x68, 0x6f, 0x72, 0x69, 0x7a,
    0x61, 0x74, 0x69, 0x6f, 0x6e, 0x2e, 0x6b, 0x38, 0x73, 0x2e, 0x69, 0x6f, 0x2f, 0x76, 0x31, 0x12,
    0x16, 0x53, 0x65, 0x6c, 0x66, 0x53, 0x75, 0x62, 0x6a, 0x65, 0x63, 0x74, 0x52, 0x75, 0x6c, 0x65,
    0x73, 0x52, 0x65, 0x76, 0x69, 0x65, 0x77, 0x12, 0x23, 0x0a, 0x10, 0x0a, 0x00, 0x12, 0x00, 0x1a,
    0x00, 0x22, 0x00, 0x2a, 0x00, 0x32, 0x00, 0x38, 0x00, 0x42, 0x00, 0x12, 0x09, 0x0a, 0x07, 0x64,
    0x65, 0x66, 0x61, 0x75, 0x6c, 0x74, 0x1a, 0x04, 0x18, 0x00, 0x22, 0x00, 0x1a, 0x00, 0x22, 0x00,
];

#[test]
fn kubectl_self_subject_rules_review_decodes_to_its_namespace() {
    let review = decode_object(CAN_I_LIST).expect("kubectl's body decodes");
    assert_eq!(
        review,
        json!({
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SelfSubjectRulesReview",
            "metadata": {},
            "spec": {"namespace": "default"},
            "status": {},
        })
    );
}

#[test]
fn rules_review_answer_round_trips_except_for_zero_values() {
    let answer = json!({
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectRulesReview",
        "metadata": {"creationTimestamp": null},
        "spec": {},
        "status": {
            "resourceRules": [
                {"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]},
                {"verbs": ["get"], "apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["a", "b"]},
            ],
            "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": ["/healthz", "/api/*"]}],
            "incomplete": false,
            "evaluationError": "clusterrole.rbac.authorization.k8s.io \"x\" not found",
        },
    });
    let bytes = encode_object(&answer).expect("encodes");
    let mut expected = answer.clone();
    expected["metadata"] = json!({});
    if let Some(status) = expected["status"].as_object_mut() {
        status.remove("incomplete");
    }
    assert_eq!(decode_object(&bytes).expect("decodes"), expected);
}

#[test]
fn rules_review_status_writes_incomplete_even_when_false() {
    let answer = json!({
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectRulesReview",
        "status": {"resourceRules": [], "nonResourceRules": [], "incomplete": false},
    });
    let bytes = encode_object(&answer).expect("encodes");
    // raw (2) = status (3) { incomplete (3) = varint 0 }, then empty contentEncoding and contentType,
    // as Go's marshaller writes a non-pointer bool.
    assert!(
        bytes.ends_with(&[0x12, 0x04, 0x1a, 0x02, 0x18, 0x00, 0x1a, 0x00, 0x22, 0x00]),
        "{bytes:02x?}"
    );
}

#[test]
fn kubectl_self_subject_access_review_decodes_like_its_json_form() {
    let review = decode_object(CAN_I_GET_PODS).expect("kubectl's body decodes");
    assert_eq!(
        review,
        json!({
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SelfSubjectAccessReview",
            "metadata": {},
            "spec": {"resourceAttributes": {"namespace": "default", "verb": "get", "resource": "pods"}},
            "status": {},
        })
    );
}

#[test]
fn subresource_group_and_name_are_read_from_their_field_numbers() {
    let review = decode_object(CAN_I_CREATE_DEPLOYMENT_STATUS).expect("kubectl's body decodes");
    assert_eq!(
        review["spec"]["resourceAttributes"],
        json!({"namespace": "kube-system", "verb": "create", "group": "apps",
               "resource": "deployments", "subresource": "status", "name": "scale"})
    );
}

#[test]
fn encoded_review_decodes_to_the_same_object() {
    let review = json!({
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SubjectAccessReview",
        "metadata": {"name": "r", "labels": {"a": "b"}, "creationTimestamp": "2024-05-06T07:08:09Z", "generation": 3},
        "spec": {
            "user": "alice", "groups": ["dev", "system:authenticated"],
            "extra": {"scopes": ["x", "y"]},
            "nonResourceAttributes": {"path": "/healthz", "verb": "get"},
        },
        "status": {"allowed": true, "reason": "RBAC: allowed"},
    });
    let bytes = encode_object(&review).expect("encodes");
    assert!(bytes.starts_with(b"k8s\0"));
    assert_eq!(decode_object(&bytes).expect("decodes"), review);
}

#[test]
fn unknown_fields_are_skipped_and_known_fields_keep_their_meaning() {
    // SelfSubjectAccessReview with spec.resourceAttributes{verb: "list", fieldSelector (8): {...}}.
    let mut attributes = Writer::default();
    attributes.bytes_field(2, b"list");
    attributes.bytes_field(8, &[0x0a, 0x01, b'x']);
    let mut spec = Writer::default();
    spec.bytes_field(1, &attributes.into_bytes());
    let mut object = Writer::default();
    object.bytes_field(2, &spec.into_bytes());
    object.varint_field(99, 7);
    let mut type_meta = Writer::default();
    type_meta.bytes_field(1, b"authorization.k8s.io/v1");
    type_meta.bytes_field(2, b"SelfSubjectAccessReview");
    let mut envelope = Writer::default();
    envelope.bytes_field(1, &type_meta.into_bytes());
    envelope.bytes_field(2, &object.into_bytes());
    let body = [MAGIC, &envelope.into_bytes()].concat();
    let review = decode_object(&body).expect("decodes");
    assert_eq!(
        review["spec"],
        json!({"resourceAttributes": {"verb": "list"}})
    );
}

#[test]
fn decoding_fails_with_the_reason_for_bad_bodies() {
    assert!(matches!(
        decode_object(b"{\"kind\":\"x\"}"),
        Err(ProtobufError::Magic)
    ));
    let truncated = &CAN_I_GET_PODS[..CAN_I_GET_PODS.len() - 3];
    assert!(matches!(
        decode_object(truncated),
        Err(ProtobufError::Truncated { .. })
    ));
    let mut type_meta = Writer::default();
    type_meta.bytes_field(1, b"v1");
    type_meta.bytes_field(2, b"Pod");
    let mut envelope = Writer::default();
    envelope.bytes_field(1, &type_meta.into_bytes());
    let body = [MAGIC, &envelope.into_bytes()].concat();
    assert!(matches!(
        decode_object(&body),
        Err(ProtobufError::UnknownKind { .. })
    ));
    // spec sent as a varint instead of a message.
    let mut object = Writer::default();
    object.varint_field(2, 1);
    let mut type_meta = Writer::default();
    type_meta.bytes_field(1, b"authorization.k8s.io/v1");
    type_meta.bytes_field(2, b"SelfSubjectAccessReview");
    let mut envelope = Writer::default();
    envelope.bytes_field(1, &type_meta.into_bytes());
    envelope.bytes_field(2, &object.into_bytes());
    let body = [MAGIC, &envelope.into_bytes()].concat();
    assert!(matches!(
        decode_object(&body),
        Err(ProtobufError::FieldWireType { field: "spec", .. })
    ));
}

#[test]
fn protobuf_answers_only_when_json_is_not_acceptable() {
    assert!(!only_protobuf_accepted(
        "application/vnd.kubernetes.protobuf,application/json"
    ));
    assert!(only_protobuf_accepted(
        "application/vnd.kubernetes.protobuf"
    ));
    assert!(!only_protobuf_accepted(
        "application/vnd.kubernetes.protobuf, */*"
    ));
    assert!(!only_protobuf_accepted("application/json"));
    assert!(is_protobuf(
        "application/vnd.kubernetes.protobuf; charset=utf-8"
    ));
    assert!(!is_protobuf("application/json"));
}
