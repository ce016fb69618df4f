//! Credentials written into an endpoint URL (`https://user:pass@host/`).
//!
//! `fetch` refuses URLs that carry credentials ("Request cannot be
//! constructed from a URL that includes credentials"), so such an endpoint
//! could never be reached. They are taken out of the URL and sent the way
//! HTTP intends: an `Authorization: Basic base64(user:pass)` header
//! (RFC 7617), with the percent-encoding of the URL undone first. The
//! user, the password and the header value all become secrets the
//! endpoint's redactor masks.

/// The `Authorization` header value for a URL's `userinfo`, and the
/// strings to mask (the raw and decoded parts, and the encoded token).
pub fn basic_authorization(userinfo: &str) -> (String, Vec<String>) {
    let (user, password) = userinfo.split_once(':').unwrap_or((userinfo, ""));
    let decoded = format!("{}:{}", percent_decode(user), percent_decode(password));
    let token = base64(decoded.as_bytes());
    let mut secrets: Vec<String> = [user, password].iter().filter(|s| !s.is_empty()).map(|s| s.to_string()).collect();
    secrets.extend([percent_decode(user), percent_decode(password)].into_iter().filter(|s| !s.is_empty()));
    secrets.push(token.clone());
    (format!("Basic {token}"), secrets)
}

/// Undoes `%XX` escapes; malformed escapes stay as written.
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Standard base64 with padding (RFC 4648 §4).
fn base64(input: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(input.len().div_ceil(3) * 4);
    for chunk in input.chunks(3) {
        let n = (u32::from(chunk[0]) << 16)
            | (u32::from(chunk.get(1).copied().unwrap_or(0)) << 8)
            | u32::from(chunk.get(2).copied().unwrap_or(0));
        for (i, shift) in [18, 12, 6, 0].into_iter().enumerate() {
            if i <= chunk.len() {
                out.push(ALPHABET[((n >> shift) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_rfc_4648_vectors() {
        for (input, expected) in
            [("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="), ("foobar", "Zm9vYmFy")]
        {
            assert_eq!(base64(input.as_bytes()), expected);
        }
    }

    #[test]
    fn userinfo_becomes_a_basic_header_with_escapes_undone() {
        // RFC 7617's example: Aladdin / open sesame.
        let (header, secrets) = basic_authorization("Aladdin:open%20sesame");
        assert_eq!(header, "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==");
        for s in ["Aladdin", "open%20sesame", "open sesame", "QWxhZGRpbjpvcGVuIHNlc2FtZQ=="] {
            assert!(secrets.iter().any(|x| x == s), "{s} is masked");
        }
        assert_eq!(basic_authorization("user").0, format!("Basic {}", base64(b"user:")));
        assert_eq!(percent_decode("a%2"), "a%2", "a cut escape stays as written");
        assert_eq!(percent_decode("%40%zz"), "@%zz");
        assert_eq!(percent_decode("p%41ss%2Bw%2f%3a"), "pAss+w/:", "both hex digits count, in either case");
    }
}
