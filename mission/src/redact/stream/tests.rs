use super::*;

/// Secrets in the shapes the redaction rules know, in a sentence an agent might write.
const SECRET_SENTENCES: &[(&str, &str)] = &[
    (
        "The token is ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789 for you.",
        "aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789",
    ),
    (
        "Use sk-proj-AbCdEfGhIjKlMnOpQrStUv as the key.",
        "AbCdEfGhIjKlMnOpQrStUv",
    ),
    (
        "curl -H 'Authorization: Bearer abcdefghijkl1234xyz' https://api",
        "abcdefghijkl1234xyz",
    ),
    ("password: hunter2-is-weak\nnext line", "hunter2"),
    ("export DB_PASSWORD = s3cr3tValue99\n", "s3cr3tValue99"),
    ("AWS key AKIAABCDEFGHIJKLMNOP here", "ABCDEFGHIJKLMNOP"),
    (
        "jwt eyJhbGciOiJIUzI1.eyJzdWIiOiIxMjM0.SflKxwRJSMeKKF2QT4 end",
        "SflKxwRJSMeKKF2QT4",
    ),
    (
        "db postgres://admin:Sup3rSecret@db.local/app ok",
        "Sup3rSecret",
    ),
    (
        "key:\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAx1y2z3\nabcDEF987\n-----END RSA PRIVATE KEY-----\ndone",
        "MIIEowIBAAKCAQEAx1y2z3",
    ),
];

/// What a display shows when `text` is streamed in `pieces`: every piece pushed, then the
/// end.
fn shown(pieces: &[&str]) -> String {
    let mut redactor = StreamRedactor::default();
    let mut out: String = pieces.iter().map(|piece| redactor.push(piece)).collect();
    out.push_str(&redactor.finish());
    out
}

#[test]
fn a_secret_split_anywhere_in_two_or_three_pieces_is_never_shown() {
    for (sentence, secret) in SECRET_SENTENCES {
        let bytes: Vec<usize> = (1..sentence.len())
            .filter(|at| sentence.is_char_boundary(*at))
            .collect();
        for first in &bytes {
            let two = shown(&[&sentence[..*first], &sentence[*first..]]);
            assert!(!two.contains(secret), "split at {first}: {two:?}");
            for second in bytes.iter().filter(|at| *at > first).step_by(3) {
                let three = shown(&[
                    &sentence[..*first],
                    &sentence[*first..*second],
                    &sentence[*second..],
                ]);
                assert!(
                    !three.contains(secret),
                    "split at {first}, {second}: {three:?}"
                );
            }
        }
        // Character by character, as the slowest stream would come.
        let characters: Vec<String> = sentence.chars().map(String::from).collect();
        let pieces: Vec<&str> = characters.iter().map(String::as_str).collect();
        let one_by_one = shown(&pieces);
        assert!(!one_by_one.contains(secret), "{one_by_one:?}");
    }
}

#[test]
fn plain_words_are_shown_at_once_even_the_one_still_growing() {
    let mut redactor = StreamRedactor::default();
    assert_eq!(redactor.push("Hello"), "Hello");
    assert_eq!(redactor.push(" world"), " world");
    assert_eq!(redactor.push(", here is"), ", here is");
    assert_eq!(redactor.finish(), "");
}

#[test]
fn a_growing_word_that_may_become_a_token_waits_for_its_end() {
    let mut redactor = StreamRedactor::default();
    assert_eq!(redactor.push("Sure, gh"), "Sure, ");
    assert_eq!(redactor.push("p_"), "");
    assert_eq!(
        redactor.push("aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789 "),
        "[REDACTED] "
    );
    // Diverged from every token start: shown.
    assert_eq!(redactor.push("ghost"), "ghost");
}

#[test]
fn a_word_that_names_a_secret_holds_the_rest_of_its_line() {
    let mut redactor = StreamRedactor::default();
    assert_eq!(redactor.push("Set the password "), "Set the ");
    assert_eq!(redactor.push("to hunter2 "), "");
    let line = redactor.push("now.\nThen");
    assert!(line.starts_with("password"), "{line:?}");
    assert!(line.ends_with("\nThen"), "{line:?}");
}

#[test]
fn a_line_that_never_ends_is_released_past_the_cap() {
    let mut redactor = StreamRedactor::default();
    assert_eq!(redactor.push("token: "), "");
    let long = "x".repeat(MAX_HELD_BYTES);
    assert!(!redactor.push(&long).is_empty());
}

#[test]
fn what_is_shown_of_every_redaction_case_split_anywhere_has_nothing_left_to_redact() {
    for (rule, input, _) in crate::redact::tests::CASES {
        let bytes: Vec<usize> = (1..input.len())
            .filter(|at| input.is_char_boundary(*at))
            .collect();
        for at in &bytes {
            let two = shown(&[&input[..*at], &input[*at..]]);
            assert_eq!(
                crate::redact::redact(&two),
                two,
                "rule {rule}, {input:?} split at {at}"
            );
        }
    }
}
