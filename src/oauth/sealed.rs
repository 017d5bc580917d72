//! Values that travel through a browser or another party sealed with the deployment's key
//! (AES-GCM through the cipher port) instead of being stored: the waiting authorization, the
//! identity provider's `state`, and stateless client registrations. Each purpose seals under its
//! own context, so a value sealed for one step is refused at every other, and each carries its
//! expiry inside the seal, where nobody who holds it can change it.

use super::error::OAuthError;
use super::settings::OAuthSettings;
use crate::ports::{Cipher, Clock};
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// What a sealed value is for; the name is bound into the seal as its context.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Purpose {
    /// The authorization request shown on the consent page, posted back with the decision.
    Consent,
    /// The `state` sent to the identity provider and returned on its callback.
    ProviderState,
    /// A dynamically registered client, which is its own client id.
    Client,
}

impl Purpose {
    /// The purpose's name, for logs.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Purpose::Consent => "consent",
            Purpose::ProviderState => "provider_state",
            Purpose::Client => "client",
        }
    }

    fn context(self) -> &'static [u8] {
        match self {
            Purpose::Consent => b"devtools-mcp-edge sealed\nconsent",
            Purpose::ProviderState => b"devtools-mcp-edge sealed\nprovider-state",
            Purpose::Client => b"devtools-mcp-edge sealed\nclient",
        }
    }
}

#[derive(Serialize, Deserialize)]
struct Envelope<T> {
    /// Milliseconds since the epoch after which the value is refused; `None` never expires.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    exp: Option<u64>,
    v: T,
}

/// Why a sealed value was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Refused {
    /// Not base64url, tampered with, sealed for another purpose or with another key.
    Invalid,
    /// Authentic, but past its expiry.
    Expired,
}

/// Seals `value` for `purpose`, valid until `expires_ms` (ms since the epoch) when given; the
/// result is base64url text, safe in a URL or a form field.
pub(crate) async fn seal<T: Serialize>(
    settings: &OAuthSettings,
    cipher: &dyn Cipher,
    purpose: Purpose,
    expires_ms: Option<u64>,
    value: &T,
) -> Result<String, OAuthError> {
    let plain = serde_json::to_vec(&Envelope {
        exp: expires_ms,
        v: value,
    })
    .map_err(|e| OAuthError::server_error(e.to_string()))?;
    let sealed = cipher
        .seal(settings.grant_key.bytes(), purpose.context(), &plain)
        .await
        .map_err(|e| OAuthError::server_error(format!("sealing failed ({e})")))?;
    Ok(URL_SAFE_NO_PAD.encode(sealed))
}

/// Opens what [`seal`] sealed for the same `purpose`, if it is authentic and unexpired.
pub(crate) async fn open<T: DeserializeOwned>(
    settings: &OAuthSettings,
    cipher: &dyn Cipher,
    clock: &dyn Clock,
    purpose: Purpose,
    text: &str,
) -> Result<T, Refused> {
    let bytes = URL_SAFE_NO_PAD.decode(text).map_err(|_| Refused::Invalid)?;
    let plain = cipher
        .open(settings.grant_key.bytes(), purpose.context(), &bytes)
        .await
        .map_err(|_| Refused::Invalid)?;
    let envelope: Envelope<T> = serde_json::from_slice(&plain).map_err(|_| Refused::Invalid)?;
    match envelope.exp {
        Some(exp) if clock.now_ms() >= exp => Err(Refused::Expired),
        _ => Ok(envelope.v),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oauth::store::tests::settings;
    use crate::ports::fake::FakeEnv;
    use futures::executor::block_on;

    #[test]
    fn a_value_opens_only_for_its_purpose_and_until_it_expires() {
        let env = FakeEnv::new();
        let settings = settings();
        let (cipher, clock) = (&env.cipher, &env.clock);
        let until = clock.now_ms() + 1_000;
        let text = block_on(seal(
            &settings,
            cipher,
            Purpose::Consent,
            Some(until),
            &"hello",
        ))
        .unwrap();
        let consent = |text: &str| {
            block_on(open::<String>(
                &settings,
                cipher,
                clock,
                Purpose::Consent,
                text,
            ))
        };
        assert_eq!(consent(&text), Ok("hello".to_owned()));
        for other in [Purpose::ProviderState, Purpose::Client] {
            assert_eq!(
                block_on(open::<String>(&settings, cipher, clock, other, &text)),
                Err(Refused::Invalid)
            );
        }
        let mut tampered = text.clone().into_bytes();
        let last = tampered.len() - 2;
        tampered[last] = if tampered[last] == b'A' { b'B' } else { b'A' };
        assert_eq!(
            consent(&String::from_utf8(tampered).unwrap()),
            Err(Refused::Invalid)
        );
        env.clock.advance(1_000);
        assert_eq!(consent(&text), Err(Refused::Expired));
    }
}
