//! Field numbers and JSON names of the protobuf messages the sandbox reads and writes, as in
//! Kubernetes' `generated.proto` files (`k8s.io/api/authorization/v1`, `k8s.io/apimachinery/pkg/apis/meta/v1`).
//!
//! The review kinds are read and written (`kubectl auth can-i` posts a SelfSubjectAccessReview,
//! `kubectl auth can-i --list` a SelfSubjectRulesReview, and wants the answer as protobuf); the
//! kinds kubectl's imperative `create` commands post are only read ([`super::kinds`]).

/// How a field is encoded and shown in JSON.
#[derive(Clone, Copy, Debug)]
pub enum FieldType {
    /// `string`: a JSON string.
    String,
    /// `bool`: a JSON boolean.
    Bool,
    /// `int64` / `int32`: a JSON number.
    Int,
    /// `meta.v1.Time` (`{seconds, nanos}`): an RFC 3339 string in JSON.
    Time,
    /// An embedded message: a JSON object.
    Message(&'static Message),
    /// `map<string, string>`: a JSON object of strings.
    StringMap,
    /// `map<string, ExtraValue>` (`ExtraValue` = `repeated string items = 1`): a JSON object of string arrays.
    StringListMap,
    /// `map<string, bytes>`: a JSON object of base64 strings.
    BytesMap,
    /// `map<string, resource.Quantity>` (`Quantity` = `optional string string = 1`): a JSON object
    /// of quantity strings.
    QuantityMap,
    /// `intstr.IntOrString` (`type` = 1: 0 int, 1 string; `intVal` = 2; `strVal` = 3): a JSON
    /// number or string.
    IntOrString,
}

/// One field of a message.
#[derive(Debug)]
pub struct Field {
    /// Field number on the wire.
    pub number: u32,
    /// JSON name.
    pub name: &'static str,
    /// Encoding.
    pub kind: FieldType,
    /// `repeated` (a JSON array).
    pub repeated: bool,
    /// A pointer in Go (`*int32`, `*bool`): a zero value on the wire was set and is kept in JSON.
    pub keep_zero: bool,
}

/// A message: its fields in field-number order.
#[derive(Debug)]
pub struct Message {
    /// Proto message name (for errors).
    pub name: &'static str,
    /// Fields, in field-number order.
    pub fields: &'static [Field],
}

impl Message {
    /// The field with this number, if the schema knows it.
    pub fn field(&self, number: u32) -> Option<&'static Field> {
        self.fields.iter().find(|f| f.number == number)
    }
}

/// A singular field.
pub(super) const fn one(number: u32, name: &'static str, kind: FieldType) -> Field {
    Field {
        number,
        name,
        kind,
        repeated: false,
        keep_zero: false,
    }
}

/// A singular field that is a pointer in Go, so that zero is a value.
pub(super) const fn pointer(number: u32, name: &'static str, kind: FieldType) -> Field {
    Field {
        number,
        name,
        kind,
        repeated: false,
        keep_zero: true,
    }
}

/// A repeated field.
pub(super) const fn many(number: u32, name: &'static str, kind: FieldType) -> Field {
    Field {
        number,
        name,
        kind,
        repeated: true,
        keep_zero: false,
    }
}

use FieldType as T;

/// `meta.v1.OwnerReference`.
pub static OWNER_REFERENCE: Message = Message {
    name: "OwnerReference",
    fields: &[
        one(1, "kind", T::String),
        one(3, "name", T::String),
        one(4, "uid", T::String),
        one(5, "apiVersion", T::String),
        one(6, "controller", T::Bool),
        one(7, "blockOwnerDeletion", T::Bool),
    ],
};

/// `meta.v1.ObjectMeta` (without `managedFields`, which requests never need).
pub static OBJECT_META: Message = Message {
    name: "ObjectMeta",
    fields: &[
        one(1, "name", T::String),
        one(2, "generateName", T::String),
        one(3, "namespace", T::String),
        one(4, "selfLink", T::String),
        one(5, "uid", T::String),
        one(6, "resourceVersion", T::String),
        one(7, "generation", T::Int),
        one(8, "creationTimestamp", T::Time),
        one(9, "deletionTimestamp", T::Time),
        one(10, "deletionGracePeriodSeconds", T::Int),
        one(11, "labels", T::StringMap),
        one(12, "annotations", T::StringMap),
        many(13, "ownerReferences", T::Message(&OWNER_REFERENCE)),
        many(14, "finalizers", T::String),
    ],
};

/// `authorization.v1.ResourceAttributes`.
pub static RESOURCE_ATTRIBUTES: Message = Message {
    name: "ResourceAttributes",
    fields: &[
        one(1, "namespace", T::String),
        one(2, "verb", T::String),
        one(3, "group", T::String),
        one(4, "version", T::String),
        one(5, "resource", T::String),
        one(6, "subresource", T::String),
        one(7, "name", T::String),
    ],
};

/// `authorization.v1.NonResourceAttributes`.
pub static NON_RESOURCE_ATTRIBUTES: Message = Message {
    name: "NonResourceAttributes",
    fields: &[one(1, "path", T::String), one(2, "verb", T::String)],
};

/// `authorization.v1.SubjectAccessReviewSpec`.
pub static SUBJECT_ACCESS_REVIEW_SPEC: Message = Message {
    name: "SubjectAccessReviewSpec",
    fields: &[
        one(1, "resourceAttributes", T::Message(&RESOURCE_ATTRIBUTES)),
        one(
            2,
            "nonResourceAttributes",
            T::Message(&NON_RESOURCE_ATTRIBUTES),
        ),
        one(3, "user", T::String),
        many(4, "groups", T::String),
        one(5, "extra", T::StringListMap),
        one(6, "uid", T::String),
    ],
};

/// `authorization.v1.SelfSubjectAccessReviewSpec`.
pub static SELF_SUBJECT_ACCESS_REVIEW_SPEC: Message = Message {
    name: "SelfSubjectAccessReviewSpec",
    fields: &[
        one(1, "resourceAttributes", T::Message(&RESOURCE_ATTRIBUTES)),
        one(
            2,
            "nonResourceAttributes",
            T::Message(&NON_RESOURCE_ATTRIBUTES),
        ),
    ],
};

/// `authorization.v1.SubjectAccessReviewStatus`.
pub static SUBJECT_ACCESS_REVIEW_STATUS: Message = Message {
    name: "SubjectAccessReviewStatus",
    fields: &[
        one(1, "allowed", T::Bool),
        one(2, "reason", T::String),
        one(3, "evaluationError", T::String),
        one(4, "denied", T::Bool),
    ],
};

/// `authorization.v1.SubjectAccessReview` (and `LocalSubjectAccessReview`, which has the same fields).
pub static SUBJECT_ACCESS_REVIEW: Message = Message {
    name: "SubjectAccessReview",
    fields: &[
        one(1, "metadata", T::Message(&OBJECT_META)),
        one(2, "spec", T::Message(&SUBJECT_ACCESS_REVIEW_SPEC)),
        one(3, "status", T::Message(&SUBJECT_ACCESS_REVIEW_STATUS)),
    ],
};

/// `authorization.v1.SelfSubjectAccessReview`.
pub static SELF_SUBJECT_ACCESS_REVIEW: Message = Message {
    name: "SelfSubjectAccessReview",
    fields: &[
        one(1, "metadata", T::Message(&OBJECT_META)),
        one(2, "spec", T::Message(&SELF_SUBJECT_ACCESS_REVIEW_SPEC)),
        one(3, "status", T::Message(&SUBJECT_ACCESS_REVIEW_STATUS)),
    ],
};

/// `authorization.v1.SelfSubjectRulesReviewSpec`.
pub static SELF_SUBJECT_RULES_REVIEW_SPEC: Message = Message {
    name: "SelfSubjectRulesReviewSpec",
    fields: &[one(1, "namespace", T::String)],
};

/// `authorization.v1.ResourceRule`.
pub static RESOURCE_RULE: Message = Message {
    name: "ResourceRule",
    fields: &[
        many(1, "verbs", T::String),
        many(2, "apiGroups", T::String),
        many(3, "resources", T::String),
        many(4, "resourceNames", T::String),
    ],
};

/// `authorization.v1.NonResourceRule`.
pub static NON_RESOURCE_RULE: Message = Message {
    name: "NonResourceRule",
    fields: &[
        many(1, "verbs", T::String),
        many(2, "nonResourceURLs", T::String),
    ],
};

/// `authorization.v1.SubjectRulesReviewStatus`.
pub static SUBJECT_RULES_REVIEW_STATUS: Message = Message {
    name: "SubjectRulesReviewStatus",
    fields: &[
        many(1, "resourceRules", T::Message(&RESOURCE_RULE)),
        many(2, "nonResourceRules", T::Message(&NON_RESOURCE_RULE)),
        one(3, "incomplete", T::Bool),
        one(4, "evaluationError", T::String),
    ],
};

/// `authorization.v1.SelfSubjectRulesReview`.
pub static SELF_SUBJECT_RULES_REVIEW: Message = Message {
    name: "SelfSubjectRulesReview",
    fields: &[
        one(1, "metadata", T::Message(&OBJECT_META)),
        one(2, "spec", T::Message(&SELF_SUBJECT_RULES_REVIEW_SPEC)),
        one(3, "status", T::Message(&SUBJECT_RULES_REVIEW_STATUS)),
    ],
};

/// The top-level message of a kind the sandbox reads from protobuf request bodies.
pub fn message_for(api_version: &str, kind: &str) -> Option<&'static Message> {
    review_message_for(api_version, kind).or_else(|| super::kinds::message_for(api_version, kind))
}

/// The top-level message of a kind the sandbox also answers in protobuf: the reviews, whose
/// schema covers every field. The other kinds' schemas list what kubectl sends, not their status.
pub fn response_message_for(api_version: &str, kind: &str) -> Option<&'static Message> {
    review_message_for(api_version, kind)
}

fn review_message_for(api_version: &str, kind: &str) -> Option<&'static Message> {
    match (api_version, kind) {
        ("authorization.k8s.io/v1", "SelfSubjectAccessReview") => Some(&SELF_SUBJECT_ACCESS_REVIEW),
        ("authorization.k8s.io/v1", "SelfSubjectRulesReview") => Some(&SELF_SUBJECT_RULES_REVIEW),
        ("authorization.k8s.io/v1", "SubjectAccessReview" | "LocalSubjectAccessReview") => {
            Some(&SUBJECT_ACCESS_REVIEW)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_ordered(message: &Message) {
        let numbers: Vec<u32> = message.fields.iter().map(|f| f.number).collect();
        let mut sorted = numbers.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(
            numbers, sorted,
            "{} fields are unique and in order",
            message.name
        );
        for field in message.fields {
            if let FieldType::Message(inner) = field.kind {
                assert_ordered(inner);
            }
        }
    }

    #[test]
    fn every_message_lists_unique_field_numbers_in_order() {
        assert_ordered(&SELF_SUBJECT_ACCESS_REVIEW);
        assert_ordered(&SUBJECT_ACCESS_REVIEW);
        assert_ordered(&SELF_SUBJECT_RULES_REVIEW);
        for message in super::super::kinds::all() {
            assert_ordered(message);
        }
    }

    #[test]
    fn only_reviews_of_authorization_v1_are_answered_in_protobuf() {
        for kind in [
            "SelfSubjectAccessReview",
            "LocalSubjectAccessReview",
            "SelfSubjectRulesReview",
        ] {
            assert!(response_message_for("authorization.k8s.io/v1", kind).is_some());
            assert!(message_for("authorization.k8s.io/v1", kind).is_some());
        }
        assert!(message_for("authorization.k8s.io/v1beta1", "SelfSubjectAccessReview").is_none());
        assert!(message_for("v1", "ConfigMap").is_some());
        assert!(response_message_for("v1", "ConfigMap").is_none());
        assert!(message_for("v1", "Pod").is_none());
    }
}
