//! [`QuestionSeal`]: the question about a sensitive action on MCP 2026-07-28, where a server
//! sends no request to its client. The call's answer is an `InputRequiredResult` whose
//! `requestState` seals what was asked about ([`AskedCall`]); the client calls again with the
//! person's answer and that state, and only a state this process (or a replica holding the
//! same key) sealed, unexpired, never redeemed before and naming the same call lets a yes
//! through. It decides nothing about the answer itself: that is `sensitive`'s.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex, PoisonError},
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
    /// The question was answered before (or was never asked by this process): one yes is one
    /// write.
    Replayed,
}

/// Why no question is asked: too many are open, for the client or for all of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Crowded {
    /// The client asking has [`MAX_OPEN_PER_CLIENT`] questions open.
    Client(String),
    /// [`MAX_OPEN`] questions are open across all clients.
    All,
}

impl Crowded {
    /// Why, in words that end the refusal of the question.
    pub fn why(&self, ttl: Duration) -> String {
        match self {
            Self::Client(client) => format!(
                "{client} has {MAX_OPEN_PER_CLIENT} questions open, the most one client may have: a new one is asked once one of those is answered or has lapsed (each within {ttl:?})"
            ),
            Self::All => format!(
                "{MAX_OPEN} questions are open, the most this server keeps for all clients together: a new one is asked once some are answered or have lapsed (each within {ttl:?})"
            ),
        }
    }
}

/// The most questions one client may have open at once: a person answers one at a time.
pub(super) const MAX_OPEN_PER_CLIENT: usize = 16;

/// The most questions open at once across all clients.
pub(super) const MAX_OPEN: usize = 1024;

/// The questions asked and not yet answered.
/// Invariant: a nonce is here from its question until its first answer that names the same
/// call, or until its question expires; `per_client` counts the entries of each client.
#[derive(Default)]
struct Open {
    /// The nonce of each open question, with its client and when it expires (epoch ms).
    questions: HashMap<String, (Arc<str>, i64)>,
    per_client: HashMap<Arc<str>, usize>,
}

impl Open {
    fn forget_expired(&mut self, now: i64) {
        let per_client = &mut self.per_client;
        self.questions.retain(|_, (client, expires)| {
            let open = *expires >= now;
            if !open {
                remove_one(per_client, client);
            }
            open
        });
    }

    fn take(&mut self, nonce: &str) -> bool {
        let Some((client, _)) = self.questions.remove(nonce) else {
            return false;
        };
        remove_one(&mut self.per_client, &client);
        true
    }
}

fn remove_one(per_client: &mut HashMap<Arc<str>, usize>, client: &Arc<str>) {
    if let Some(count) = per_client.get_mut(client) {
        *count -= 1;
        if *count == 0 {
            per_client.remove(client);
        }
    }
}

/// Seals questions into request states and lets each be answered once.
///
/// The room is taken when a question is asked, never when it is answered: an answer to a
/// question asked is never refused for want of room, a flood of questions is refused at the
/// question (per client first, so one client cannot take another's room), and an answer of
/// any kind frees its question's place.
pub(super) struct QuestionSeal {
    codec: RequestStateCodec,
    /// The questions asked by this process and not yet answered. It lives in this process
    /// only, which is why the key does too: a state is answerable only where it was asked,
    /// and not after a restart.
    open: Mutex<Open>,
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
            open: Mutex::default(),
        }
    }

    fn open(&self) -> std::sync::MutexGuard<'_, Open> {
        self.open.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The request state of a question that `client` asks about `call`, answerable within
    /// `ttl`; refused when too many questions are open.
    pub fn seal(&self, call: AskedCall, ttl: Duration, client: &str) -> Result<String, Crowded> {
        let expires_ms =
            now_ms().saturating_add(i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX));
        self.seal_until(call, expires_ms, ttl, client)
    }

    /// [`Self::seal`] with the expiry given (a past one in tests).
    fn seal_until(
        &self,
        call: AskedCall,
        expires_ms: i64,
        ttl: Duration,
        client: &str,
    ) -> Result<String, Crowded> {
        let mut nonce = [0u8; 16];
        getrandom::fill(&mut nonce).expect("the operating system provides random bytes");
        let nonce: String = nonce.iter().map(|byte| format!("{byte:02x}")).collect();
        {
            let mut open = self.open();
            let room = |open: &Open| {
                if open.per_client.get(client).copied().unwrap_or(0) >= MAX_OPEN_PER_CLIENT {
                    Err(Crowded::Client(client.to_owned()))
                } else if open.questions.len() >= MAX_OPEN {
                    Err(Crowded::All)
                } else {
                    Ok(())
                }
            };
            if room(&open).is_err() {
                open.forget_expired(now_ms());
                room(&open)?;
            }
            let client: Arc<str> = open
                .per_client
                .get_key_value(client)
                .map_or_else(|| client.into(), |(known, _)| Arc::clone(known));
            *open.per_client.entry(Arc::clone(&client)).or_default() += 1;
            open.questions.insert(nonce.clone(), (client, expires_ms));
        }
        let sealed = Sealed {
            call,
            expires_ms,
            nonce,
        };
        // The codec's own expiry too: its check runs before the payload is read.
        let options = SealOptions::new().ttl(ttl);
        Ok(self
            .codec
            .seal_json_with(&sealed, &options)
            .expect("the sealed question serializes: strings, numbers and JSON values"))
    }

    /// Redeems `state` for `call`: it must verify, not have expired, name this same call,
    /// and be a question of this process not answered before; then it is spent, whatever the
    /// answer.
    pub fn redeem(&self, state: &str, call: &AskedCall) -> Result<(), Unsealed> {
        let sealed: Sealed = self.codec.open_json(state).map_err(|err| match err {
            RequestStateError::Expired => Unsealed::Expired,
            _ => Unsealed::Tampered,
        })?;
        if now_ms() > sealed.expires_ms {
            return Err(Unsealed::Expired);
        }
        if &sealed.call != call {
            return Err(Unsealed::OtherCall);
        }
        if self.open().take(&sealed.nonce) {
            Ok(())
        } else {
            Err(Unsealed::Replayed)
        }
    }

    /// How many questions are open (the tests').
    #[cfg(test)]
    fn open_count(&self) -> usize {
        self.open().questions.len()
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
    const CLIENT: &str = "client \"a\" 1";

    #[test]
    fn a_sealed_question_is_redeemed_once() {
        let seal = QuestionSeal::default();
        let state = seal.seal(unlock(), MINUTE, CLIENT).unwrap();
        assert_eq!(seal.redeem(&state, &unlock()), Ok(()));
        assert_eq!(seal.redeem(&state, &unlock()), Err(Unsealed::Replayed));
        // Another question about the same call is another nonce.
        let again = seal.seal(unlock(), MINUTE, CLIENT).unwrap();
        assert_ne!(again, state);
        assert_eq!(seal.redeem(&again, &unlock()), Ok(()));
    }

    #[test]
    fn any_byte_changed_in_a_sealed_question_is_refused() {
        let seal = QuestionSeal::default();
        let state = seal.seal(unlock(), MINUTE, CLIENT).unwrap();
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
        let state = asked.seal(unlock(), MINUTE, CLIENT).unwrap();
        let other = QuestionSeal::default();
        assert_eq!(other.redeem(&state, &unlock()), Err(Unsealed::Tampered));
        assert_eq!(asked.redeem(&state, &unlock()), Ok(()));
        assert_eq!(other.redeem(&state, &unlock()), Err(Unsealed::Tampered));
    }

    #[test]
    fn a_question_sealed_under_another_key_is_refused() {
        let ours = QuestionSeal::with_key(&[7; 32]).unwrap();
        let theirs = QuestionSeal::with_key(&[8; 32]).unwrap();
        let state = theirs.seal(unlock(), MINUTE, CLIENT).unwrap();
        assert_eq!(ours.redeem(&state, &unlock()), Err(Unsealed::Tampered));
        // Even under the same key, a question is answerable only where it was asked.
        let replica = QuestionSeal::with_key(&[7; 32]).unwrap();
        let asked_there = replica.seal(unlock(), MINUTE, CLIENT).unwrap();
        assert_eq!(
            ours.redeem(&asked_there, &unlock()),
            Err(Unsealed::Replayed)
        );
        assert_eq!(replica.redeem(&asked_there, &unlock()), Ok(()));
        assert!(QuestionSeal::with_key(&[7; 31]).is_err(), "a short key");
    }

    #[test]
    fn an_expired_question_is_refused() {
        let seal = QuestionSeal::default();
        let past = seal
            .seal_until(unlock(), now_ms() - 1, MINUTE, CLIENT)
            .unwrap();
        assert_eq!(seal.redeem(&past, &unlock()), Err(Unsealed::Expired));
        let lapsed = seal.seal(unlock(), Duration::ZERO, CLIENT).unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        let mut answer = seal.redeem(&lapsed, &unlock());
        // A zero time-to-live lapses at the next millisecond; the clock is polled, bounded.
        while answer.is_ok() && std::time::Instant::now() < deadline {
            answer = seal.redeem(
                &seal.seal(unlock(), Duration::ZERO, CLIENT).unwrap(),
                &unlock(),
            );
        }
        assert_eq!(answer, Err(Unsealed::Expired));
    }

    #[test]
    fn an_answer_to_another_call_is_refused_and_not_spent() {
        let seal = QuestionSeal::default();
        let state = seal.seal(unlock(), MINUTE, CLIENT).unwrap();
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
    fn a_flood_of_questions_is_refused_at_the_question_per_client_and_no_answer_for_want_of_room() {
        let seal = QuestionSeal::default();
        // One client fills its share; answering (yes or no alike) frees a place.
        let states: Vec<String> = (0..MAX_OPEN_PER_CLIENT)
            .map(|_| seal.seal(unlock(), MINUTE, "flood").unwrap())
            .collect();
        assert_eq!(
            seal.seal(unlock(), MINUTE, "flood"),
            Err(Crowded::Client("flood".into()))
        );
        assert_eq!(seal.redeem(&states[0], &unlock()), Ok(()));
        let again = seal.seal(unlock(), MINUTE, "flood").unwrap();
        // Another client is asked meanwhile, and every question asked is answerable.
        let other = seal.seal(unlock(), MINUTE, CLIENT).unwrap();
        assert_eq!(seal.redeem(&other, &unlock()), Ok(()));
        assert_eq!(seal.redeem(&other, &unlock()), Err(Unsealed::Replayed));
        for state in states.iter().skip(1).chain([&again]) {
            assert_eq!(seal.redeem(state, &unlock()), Ok(()));
        }
        assert_eq!(seal.open_count(), 0);
        assert_eq!(seal.open().per_client.len(), 0);
        // Clients by the hundred: the whole bound, then refused for all.
        for n in 0..MAX_OPEN {
            seal.seal(unlock(), MINUTE, &format!("client {n}")).unwrap();
        }
        assert_eq!(seal.seal(unlock(), MINUTE, CLIENT), Err(Crowded::All));
        assert_eq!(
            Crowded::All.why(MINUTE),
            "1024 questions are open, the most this server keeps for all clients together: a new one is asked once some are answered or have lapsed (each within 60s)"
        );
        assert_eq!(
            Crowded::Client("\"flood\" 1.0".into()).why(MINUTE),
            "\"flood\" 1.0 has 16 questions open, the most one client may have: a new one is asked once one of those is answered or has lapsed (each within 60s)"
        );
    }

    #[test]
    fn lapsed_questions_make_room_when_room_is_wanted() {
        let seal = QuestionSeal::default();
        for _ in 0..MAX_OPEN_PER_CLIENT {
            seal.seal_until(unlock(), now_ms() - 1, MINUTE, CLIENT)
                .unwrap();
        }
        assert_eq!(seal.open_count(), MAX_OPEN_PER_CLIENT);
        let state = seal.seal(unlock(), MINUTE, CLIENT).unwrap();
        assert_eq!(seal.open_count(), 1);
        assert_eq!(seal.redeem(&state, &unlock()), Ok(()));
    }
}
