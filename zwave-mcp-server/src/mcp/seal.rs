//! [`QuestionSeal`]: the question about a sensitive action on MCP 2026-07-28, where a server
//! sends no request to its client. The call's answer is an `InputRequiredResult` whose
//! `requestState` seals what was asked about ([`AskedCall`]); the client calls again with the
//! person's answer and that state, and only a state this process (or a replica holding the
//! same key) sealed, unexpired, never redeemed before and naming the same call lets a yes
//! through. It decides nothing about the answer itself: that is `sensitive`'s.

use std::{
    collections::HashMap,
    sync::{Mutex, PoisonError},
    time::Duration,
};

use rmcp::model::{RequestStateCodec, RequestStateError, SealOptions};
use serde::{Deserialize, Serialize};

use crate::network::now_ms;

/// The call a question is about, as the state binds it: a retried call writes only when it
/// is this same call on the same device, named and placed as it was when the person was asked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct AskedCall {
    /// The tool called.
    pub tool: String,
    /// The device as the call named it.
    pub device_name: String,
    /// The node the lookup found.
    pub node: u16,
    /// Its name at the lookup.
    pub name: String,
    /// Its location at the lookup.
    pub location: String,
    /// The action and every argument the call gave, as parsed.
    pub request: serde_json::Value,
    /// The value to be written (its id) and what it would become.
    pub target: String,
    /// The value written.
    pub value: serde_json::Value,
}

/// What the sealed state holds: the call, when the question lapses, and the one-time nonce.
#[derive(Debug, Serialize, Deserialize)]
struct Sealed {
    call: AskedCall,
    /// Epoch milliseconds after which the answer is refused.
    expires_ms: i64,
    /// Which question this is: redeemed once.
    nonce: String,
}

/// Why a retried call's state lets nothing through.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Unsealed {
    /// Altered, forged, or sealed under another key.
    Tampered,
    /// The question's time ran out.
    Expired,
    /// The state is about another call (device, action or arguments).
    OtherCall,
    /// The state was redeemed before: one yes is one write.
    Replayed,
    /// Too many answers are remembered to remember one more: refused rather than forgotten.
    Full,
}

/// The most redeemed nonces remembered at once. Each is kept only until its question would
/// have expired anyway; past this many, answers are refused until some expire.
const MAX_REMEMBERED: usize = 10_000;

/// Seals questions into request states and redeems them once.
pub(super) struct QuestionSeal {
    codec: RequestStateCodec,
    /// Nonces of the states redeemed, with the instant (epoch ms) their question expires.
    /// Invariant: an entry is dropped only once expired, when a state bearing it fails
    /// the expiry check anyway. It lives in this process only, which is why the key does too:
    /// a key shared by replicas (or kept over a restart) would let one yes be redeemed once
    /// per process. Sharing a key needs a shared record first (set-if-absent with expiry).
    used: Mutex<HashMap<String, i64>>,
}

impl std::fmt::Debug for QuestionSeal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QuestionSeal").finish_non_exhaustive()
    }
}

impl Default for QuestionSeal {
    /// Under a random key of this process: its states open nowhere else, nor after a restart.
    fn default() -> Self {
        let mut key = [0u8; 32];
        // Without the OS's randomness no secret can be had; a server that could seal with a
        // guessable key would accept forged yeses, so it does not start.
        getrandom::fill(&mut key).expect("the operating system provides random bytes");
        Self::with_codec(RequestStateCodec::new_unchecked(key.to_vec()))
    }
}

impl QuestionSeal {
    /// Under `key` (at least [`RequestStateCodec::MIN_KEY_LENGTH`] bytes): the tests' fixed keys.
    #[cfg(test)]
    fn with_key(key: &[u8]) -> Result<Self, RequestStateError> {
        RequestStateCodec::try_new(key.to_vec()).map(Self::with_codec)
    }

    fn with_codec(codec: RequestStateCodec) -> Self {
        Self {
            codec,
            used: Mutex::default(),
        }
    }

    /// The request state of a question about `call`, answerable within `ttl`.
    pub fn seal(&self, call: AskedCall, ttl: Duration) -> String {
        let expires_ms =
            now_ms().saturating_add(i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX));
        self.seal_until(call, expires_ms, ttl)
    }

    /// [`Self::seal`] with the expiry given (a past one in tests).
    fn seal_until(&self, call: AskedCall, expires_ms: i64, ttl: Duration) -> String {
        let mut nonce = [0u8; 16];
        getrandom::fill(&mut nonce).expect("the operating system provides random bytes");
        let sealed = Sealed {
            call,
            expires_ms,
            nonce: nonce.iter().map(|byte| format!("{byte:02x}")).collect(),
        };
        // The codec's own expiry too: its check runs before the payload is read.
        let options = SealOptions::new().ttl(ttl);
        self.codec
            .seal_json_with(&sealed, &options)
            .expect("the sealed question serializes: strings, numbers and JSON values")
    }

    /// Redeems `state` for `call`: it must verify, not have expired, name this same call,
    /// and never have been redeemed before; then it is spent, whatever the answer.
    pub fn redeem(&self, state: &str, call: &AskedCall) -> Result<(), Unsealed> {
        let sealed: Sealed = self.codec.open_json(state).map_err(|err| match err {
            RequestStateError::Expired => Unsealed::Expired,
            _ => Unsealed::Tampered,
        })?;
        let now = now_ms();
        if now > sealed.expires_ms {
            return Err(Unsealed::Expired);
        }
        if &sealed.call != call {
            return Err(Unsealed::OtherCall);
        }
        let mut used = self.used.lock().unwrap_or_else(PoisonError::into_inner);
        if used.contains_key(&sealed.nonce) {
            return Err(Unsealed::Replayed);
        }
        if used.len() >= MAX_REMEMBERED {
            used.retain(|_, expires| *expires >= now);
            if used.len() >= MAX_REMEMBERED {
                return Err(Unsealed::Full);
            }
        }
        used.insert(sealed.nonce, sealed.expires_ms);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn unlock() -> AskedCall {
        AskedCall {
            tool: "control_zwave_device".into(),
            device_name: "Front Door Lock".into(),
            node: 8,
            name: "Front Door Lock".into(),
            location: "Entrance".into(),
            request: json!({"action": "unlock"}),
            target: "8-98-0-targetMode".into(),
            value: json!(0),
        }
    }

    const MINUTE: Duration = Duration::from_secs(60);

    #[test]
    fn a_sealed_question_is_redeemed_once() {
        let seal = QuestionSeal::default();
        let state = seal.seal(unlock(), MINUTE);
        assert_eq!(seal.redeem(&state, &unlock()), Ok(()));
        assert_eq!(seal.redeem(&state, &unlock()), Err(Unsealed::Replayed));
        // Another question about the same call is another nonce.
        let again = seal.seal(unlock(), MINUTE);
        assert_ne!(again, state);
        assert_eq!(seal.redeem(&again, &unlock()), Ok(()));
    }

    #[test]
    fn any_byte_changed_in_a_sealed_question_is_refused() {
        let seal = QuestionSeal::default();
        let state = seal.seal(unlock(), MINUTE);
        for at in 0..state.len() {
            for replacement in [b'A', b'_', b'.', b'0'] {
                let mut bytes = state.clone().into_bytes();
                if bytes[at] == replacement {
                    continue;
                }
                bytes[at] = replacement;
                let tampered = String::from_utf8(bytes).unwrap();
                assert_eq!(
                    seal.redeem(&tampered, &unlock()),
                    Err(Unsealed::Tampered),
                    "byte {at} set to {}",
                    replacement as char
                );
            }
        }
        assert_eq!(seal.redeem("", &unlock()), Err(Unsealed::Tampered));
        assert_eq!(
            seal.redeem(&state[..state.len() - 1], &unlock()),
            Err(Unsealed::Tampered)
        );
        assert_eq!(
            seal.redeem(&format!("{state}A"), &unlock()),
            Err(Unsealed::Tampered)
        );
        // Untouched, it still opens.
        assert_eq!(seal.redeem(&state, &unlock()), Ok(()));
    }

    #[test]
    fn another_process_or_a_restarted_one_refuses_this_ones_question() {
        // Each process seals under its own random key, so a yes redeemed here can never be
        // redeemed again by a replica or by this server after a restart.
        let asked = QuestionSeal::default();
        let state = asked.seal(unlock(), MINUTE);
        let other = QuestionSeal::default();
        assert_eq!(other.redeem(&state, &unlock()), Err(Unsealed::Tampered));
        assert_eq!(asked.redeem(&state, &unlock()), Ok(()));
        assert_eq!(other.redeem(&state, &unlock()), Err(Unsealed::Tampered));
    }

    #[test]
    fn a_question_sealed_under_another_key_is_refused() {
        let ours = QuestionSeal::with_key(&[7; 32]).unwrap();
        let theirs = QuestionSeal::with_key(&[8; 32]).unwrap();
        let state = theirs.seal(unlock(), MINUTE);
        assert_eq!(ours.redeem(&state, &unlock()), Err(Unsealed::Tampered));
        // Replicas sharing a key open each other's states.
        let replica = QuestionSeal::with_key(&[7; 32]).unwrap();
        assert_eq!(
            ours.redeem(&replica.seal(unlock(), MINUTE), &unlock()),
            Ok(())
        );
        assert!(QuestionSeal::with_key(&[7; 31]).is_err(), "a short key");
    }

    #[test]
    fn an_expired_question_is_refused() {
        let seal = QuestionSeal::default();
        let past = seal.seal_until(unlock(), now_ms() - 1, MINUTE);
        assert_eq!(seal.redeem(&past, &unlock()), Err(Unsealed::Expired));
        let lapsed = seal.seal(unlock(), Duration::ZERO);
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        let mut answer = seal.redeem(&lapsed, &unlock());
        // A zero time-to-live lapses at the next millisecond; the clock is polled, bounded.
        while answer.is_ok() && std::time::Instant::now() < deadline {
            answer = seal.redeem(&seal.seal(unlock(), Duration::ZERO), &unlock());
        }
        assert_eq!(answer, Err(Unsealed::Expired));
    }

    #[test]
    fn an_answer_to_another_call_is_refused_and_not_spent() {
        let seal = QuestionSeal::default();
        let state = seal.seal(unlock(), MINUTE);
        for other in [
            AskedCall {
                node: 9,
                ..unlock()
            },
            AskedCall {
                location: "Patio".into(),
                ..unlock()
            },
            AskedCall {
                name: "Back Door Lock".into(),
                ..unlock()
            },
            AskedCall {
                request: json!({"action": "lock"}),
                ..unlock()
            },
            AskedCall {
                value: json!(255),
                ..unlock()
            },
            AskedCall {
                tool: "other".into(),
                ..unlock()
            },
        ] {
            assert_eq!(
                seal.redeem(&state, &other),
                Err(Unsealed::OtherCall),
                "{other:?}"
            );
        }
        assert_eq!(seal.redeem(&state, &unlock()), Ok(()));
    }

    #[test]
    fn remembered_answers_are_bounded_and_refused_past_the_bound() {
        let seal = QuestionSeal::default();
        {
            let mut used = seal.used.lock().unwrap();
            let later = now_ms() + 60_000;
            for n in 0..MAX_REMEMBERED {
                used.insert(format!("{n}"), later);
            }
        }
        let state = seal.seal(unlock(), MINUTE);
        assert_eq!(seal.redeem(&state, &unlock()), Err(Unsealed::Full));
        // Expired ones are forgotten to make room.
        seal.used
            .lock()
            .unwrap()
            .values_mut()
            .for_each(|expires| *expires = 0);
        assert_eq!(seal.redeem(&state, &unlock()), Ok(()));
        assert_eq!(seal.used.lock().unwrap().len(), 1);
    }
}
