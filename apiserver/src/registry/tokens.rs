//! Service account tokens: the JWTs `serviceaccounts/token` (TokenRequest) issues, and their check, which
//! the request authenticator and `TokenReview` share. Sans-IO: the caller passes the time and looks the
//! service account up itself ([`ServiceAccountTokens::verify`] returns the claims to look up).
//!
//! Tokens are what kube-apiserver 1.32 issues (`KK/pkg/serviceaccount/claims.go`, `jwt.go`): ES256 over the
//! claims `aud`, `exp`, `iat`, `iss`, `jti`, `kubernetes.io` (namespace and service account, and the pod
//! or secret the token is bound to), `nbf`, `sub`, with the key id kube derives from the public key (the
//! SHA-256 of its PKIX DER, base64url) in the header. The key is drawn from a seed, so the apiservers of one
//! simulated cluster, given one seed, accept each other's tokens, and a replay issues the same bytes.

use base64::Engine;
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use p256::pkcs8::{EncodePrivateKey, EncodePublicKey};
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The issuer of the tokens and their default audience (`--service-account-issuer`, which
/// `--api-audiences` defaults to), as kubeadm and kind configure it.
pub const DEFAULT_ISSUER: &str = "https://kubernetes.default.svc.cluster.local";

/// The signing key and issuer of one cluster's service account tokens.
pub struct ServiceAccountTokens {
    encoding: EncodingKey,
    /// The keys tokens are verified with: the signing key's, then those of `--service-account-key-file`.
    decoding: Vec<DecodingKey>,
    key_id: String,
    issuer: String,
}

impl std::fmt::Debug for ServiceAccountTokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServiceAccountTokens").field("key_id", &self.key_id).field("issuer", &self.issuer).finish()
    }
}

/// What a token refers to besides its service account (`kubernetes.io.pod`, `.secret`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ObjectRef {
    pub name: String,
    pub uid: String,
}

/// The `kubernetes.io` private claims.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct KubernetesClaims {
    pub namespace: String,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub pod: Option<ObjectRef>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub secret: Option<ObjectRef>,
    pub serviceaccount: ObjectRef,
}

/// A token's claims, in the order go-jose writes them (sorted: it merges the public and private claims
/// into one map).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Claims {
    pub aud: Vec<String>,
    pub exp: i64,
    pub iat: i64,
    pub iss: String,
    pub jti: String,
    #[serde(rename = "kubernetes.io")]
    pub kubernetes: KubernetesClaims,
    pub nbf: i64,
    pub sub: String,
}

/// Why a token does not authenticate. Its text is what kube's authenticator reports (`TokenReview`'s
/// `status.error`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum TokenError {
    /// Not a JWT of this issuer, or not signed with this key: kube's bearer token authenticator's default.
    #[error("invalid bearer token")]
    Invalid,
    #[error("service account token has expired")]
    Expired,
    #[error("service account token is not valid yet")]
    NotValidYet,
    /// The token is for none of the audiences asked for.
    #[error("token audiences {got:?} is invalid for the target audiences {want:?}")]
    Audience { got: Vec<String>, want: Vec<String> },
}

impl ServiceAccountTokens {
    /// The tokens of a cluster whose key is drawn from `seed`.
    pub fn from_seed(seed: u64) -> ServiceAccountTokens {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5eed_7ac0_5e4f_1ce5);
        let secret = loop {
            let mut bytes = [0u8; 32];
            rng.fill_bytes(&mut bytes);
            // A draw outside the curve's order is rare (about 2^-32); draw again.
            if let Ok(key) = p256::SecretKey::from_slice(&bytes) {
                break key;
            }
        };
        ServiceAccountTokens::from_secret(&secret, DEFAULT_ISSUER)
    }

    /// The tokens of `--service-account-signing-key-file` (a P-256 private key, PKCS #8 or SEC1 PEM) and
    /// `--service-account-issuer`. kube-apiserver also signs with RSA keys; kubesim's tokens are ES256 only.
    pub fn from_pem(key_pem: &str, issuer: &str) -> Result<ServiceAccountTokens, String> {
        use p256::pkcs8::DecodePrivateKey;
        let secret = p256::SecretKey::from_pkcs8_pem(key_pem)
            .or_else(|_| p256::SecretKey::from_sec1_pem(key_pem))
            .map_err(|_| "the signing key must be an ECDSA P-256 private key in PEM (PKCS #8 or SEC1)".to_string())?;
        if issuer.is_empty() {
            return Err("service-account-issuer is a required flag".into());
        }
        Ok(ServiceAccountTokens::from_secret(&secret, issuer))
    }

    /// These tokens, also verifying with the public keys of `--service-account-key-file` (P-256, PKIX PEM,
    /// or private keys whose public halves count), as kube-apiserver accepts tokens signed by any of them.
    pub fn with_verification_keys(mut self, pem_text: &str) -> Result<ServiceAccountTokens, String> {
        use p256::pkcs8::{DecodePrivateKey, DecodePublicKey};
        let blocks = pem::parse_many(pem_text).map_err(|e| e.to_string())?;
        if blocks.is_empty() {
            return Err("no keys found".into());
        }
        for block in blocks {
            let text = pem::encode(&block);
            let public = p256::PublicKey::from_public_key_pem(&text)
                .or_else(|_| p256::SecretKey::from_pkcs8_pem(&text).map(|k| k.public_key()))
                .or_else(|_| p256::SecretKey::from_sec1_pem(&text).map(|k| k.public_key()))
                .map_err(|_| format!("a {:?} block is not an ECDSA P-256 key", block.tag()))?;
            self.decoding.push(DecodingKey::from_ec_der(&public.to_sec1_bytes()));
        }
        Ok(self)
    }

    fn from_secret(secret: &p256::SecretKey, issuer: &str) -> ServiceAccountTokens {
        let pkcs8 = secret.to_pkcs8_der().expect("a P-256 key encodes as PKCS #8");
        let public = secret.public_key();
        let pkix = public.to_public_key_der().expect("a P-256 public key encodes as PKIX");
        let key_id = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(Sha256::digest(pkix.as_bytes()));
        ServiceAccountTokens {
            encoding: EncodingKey::from_ec_der(pkcs8.as_bytes()),
            decoding: vec![DecodingKey::from_ec_der(&public.to_sec1_bytes())],
            key_id,
            issuer: issuer.into(),
        }
    }

    /// `--service-account-issuer`, and the audience of tokens asked for with none.
    pub(crate) fn issuer(&self) -> &str {
        &self.issuer
    }

    /// The signed token of `claims`.
    pub(crate) fn issue(&self, claims: &Claims) -> String {
        let mut header = Header::new(Algorithm::ES256);
        header.kid = Some(self.key_id.clone());
        header.typ = None;
        jsonwebtoken::encode(&header, claims, &self.encoding).expect("signing with a valid P-256 key succeeds")
    }

    /// The claims of `token` if this cluster issued it, it is valid at `now_unix_s`, and (when `audiences`
    /// is not empty) it is for one of them. The service account it names is for the caller to check.
    pub(crate) fn verify(&self, token: &str, now_unix_s: i64, audiences: &[String]) -> Result<Claims, TokenError> {
        let mut validation = Validation::new(Algorithm::ES256);
        // Time and audience are judged below against the caller's clock, never the machine's.
        validation.validate_exp = false;
        validation.validate_nbf = false;
        validation.validate_aud = false;
        validation.required_spec_claims.clear();
        validation.set_issuer(&[self.issuer.as_str()]);
        let claims = self
            .decoding
            .iter()
            .find_map(|key| jsonwebtoken::decode::<Claims>(token, key, &validation).ok())
            .ok_or(TokenError::Invalid)?
            .claims;
        // go-jose's leeway for clock skew: one minute.
        const LEEWAY_S: i64 = 60;
        if now_unix_s > claims.exp + LEEWAY_S {
            return Err(TokenError::Expired);
        }
        if now_unix_s + LEEWAY_S < claims.nbf {
            return Err(TokenError::NotValidYet);
        }
        if !audiences.is_empty() && !claims.aud.iter().any(|a| audiences.contains(a)) {
            return Err(TokenError::Audience { got: claims.aud.clone(), want: audiences.to_vec() });
        }
        Ok(claims)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claims(exp: i64) -> Claims {
        Claims {
            aud: vec![DEFAULT_ISSUER.into()],
            exp,
            iat: 1000,
            iss: DEFAULT_ISSUER.into(),
            jti: "j-1".into(),
            kubernetes: KubernetesClaims {
                namespace: "ns".into(),
                serviceaccount: ObjectRef { name: "robot".into(), uid: "u-1".into() },
                ..KubernetesClaims::default()
            },
            nbf: 1000,
            sub: "system:serviceaccount:ns:robot".into(),
        }
    }

    #[test]
    fn a_token_verifies_until_it_expires() {
        let tokens = ServiceAccountTokens::from_seed(7);
        let token = tokens.issue(&claims(4600));
        assert_eq!(tokens.verify(&token, 2000, &[]), Ok(claims(4600)));
        assert_eq!(tokens.verify(&token, 4660, &[]), Ok(claims(4600)), "within the leeway");
        assert_eq!(tokens.verify(&token, 4661, &[]), Err(TokenError::Expired));
        assert_eq!(tokens.verify(&token, 900, &[]), Err(TokenError::NotValidYet));
    }

    #[test]
    fn tokens_are_the_same_bytes_for_the_same_seed_and_foreign_ones_fail() {
        let a = ServiceAccountTokens::from_seed(7);
        let b = ServiceAccountTokens::from_seed(7);
        assert_eq!(a.issue(&claims(4600)), b.issue(&claims(4600)), "signing is deterministic");
        let other = ServiceAccountTokens::from_seed(8);
        assert_eq!(other.verify(&a.issue(&claims(4600)), 2000, &[]), Err(TokenError::Invalid));
        assert_eq!(a.verify("kubesim", 2000, &[]), Err(TokenError::Invalid));
        let token = a.issue(&claims(4600));
        let header = token.split('.').next().unwrap();
        let header: serde_json::Value =
            serde_json::from_slice(&base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(header).unwrap()).unwrap();
        assert_eq!(header["alg"], "ES256");
        assert_eq!(header["kid"].as_str().unwrap().len(), 43, "a base64url SHA-256");
    }

    #[test]
    fn keys_from_pem_sign_and_verify_with_the_issuer_given() {
        use p256::pkcs8::{EncodePrivateKey, EncodePublicKey, LineEnding};
        let secret = p256::SecretKey::from_slice(&[7u8; 32]).unwrap();
        let pem = secret.to_pkcs8_pem(LineEnding::LF).unwrap();
        let tokens = ServiceAccountTokens::from_pem(&pem, "https://issuer.example").unwrap();
        assert_eq!(tokens.issuer(), "https://issuer.example");
        let mut c = claims(4600);
        c.iss = "https://issuer.example".into();
        let token = tokens.issue(&c);
        assert_eq!(tokens.verify(&token, 2000, &[]), Ok(c.clone()));
        // Another signer's tokens verify once its public key is given.
        let other = ServiceAccountTokens::from_pem(
            &p256::SecretKey::from_slice(&[9u8; 32]).unwrap().to_pkcs8_pem(LineEnding::LF).unwrap(),
            "https://issuer.example",
        )
        .unwrap();
        let foreign = other.issue(&c);
        assert_eq!(tokens.verify(&foreign, 2000, &[]), Err(TokenError::Invalid));
        let public = p256::SecretKey::from_slice(&[9u8; 32]).unwrap().public_key();
        let tokens = tokens.with_verification_keys(&public.to_public_key_pem(LineEnding::LF).unwrap()).unwrap();
        assert_eq!(tokens.verify(&foreign, 2000, &[]), Ok(c));
        assert!(ServiceAccountTokens::from_pem("not a key", "x").unwrap_err().contains("P-256"));
        assert!(ServiceAccountTokens::from_pem(&pem, "").unwrap_err().contains("issuer"));
    }

    #[test]
    fn audiences_must_meet() {
        let tokens = ServiceAccountTokens::from_seed(7);
        let token = tokens.issue(&claims(4600));
        assert!(tokens.verify(&token, 2000, &[DEFAULT_ISSUER.into(), "vault".into()]).is_ok());
        assert_eq!(
            tokens.verify(&token, 2000, &["vault".into()]),
            Err(TokenError::Audience { got: vec![DEFAULT_ISSUER.into()], want: vec!["vault".into()] })
        );
    }
}
