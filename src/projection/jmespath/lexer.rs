//! Tokenizer for JMESPath, reproducing npm `jmespath` 0.16.0 token for token, including its
//! lenient corners (unterminated raw strings and literals are accepted, `\r` is not whitespace).

use crate::value::{parse, Value};

use crate::js;

/// A comparison operator: a token, and the node the parser makes of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Cmp {
    Eq,
    Ne,
    Lt,
    Lte,
    Gt,
    Gte,
}

/// One token of an expression.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Tok {
    Ident(String),
    Quoted(String),
    Literal(Value),
    /// `parseInt` of a run of digits and `-`: may be NaN or infinite.
    Number(f64),
    Dot,
    Star,
    Comma,
    Colon,
    LBrace,
    RBrace,
    LBracket,
    RBracket,
    LParen,
    RParen,
    Current,
    Expref,
    Pipe,
    Or,
    And,
    Not,
    /// A comparison, which the parser takes as it is into the syntax tree.
    Cmp(Cmp),
    Flatten,
    Filter,
    Eof,
}

impl Tok {
    /// The binding power the reference parser assigns; `None` where its table has no entry
    /// (`Colon`, `Literal`), which compares false against every number in JavaScript.
    pub(crate) fn binding_power(&self) -> Option<u8> {
        Some(match self {
            Tok::Eof
            | Tok::Ident(_)
            | Tok::Quoted(_)
            | Tok::RBracket
            | Tok::RParen
            | Tok::Comma
            | Tok::RBrace
            | Tok::Number(_)
            | Tok::Current
            | Tok::Expref => 0,
            Tok::Pipe => 1,
            Tok::Or => 2,
            Tok::And => 3,
            Tok::Cmp(_) => 5,
            Tok::Flatten => 9,
            Tok::Star => 20,
            Tok::Filter => 21,
            Tok::Dot => 40,
            Tok::Not => 45,
            Tok::LBrace => 50,
            Tok::LBracket => 55,
            Tok::LParen => 60,
            Tok::Colon | Tok::Literal(_) => return None,
        })
    }
}

/// Why an expression does not tokenize.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct LexError(pub(crate) &'static str);

fn is_alpha(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_'
}

fn is_alnum(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

fn is_num(b: u8) -> bool {
    b.is_ascii_digit() || b == b'-'
}

/// Splits `src` into tokens, ending with [`Tok::Eof`].
pub(crate) fn tokenize(src: &str) -> Result<Vec<Tok>, LexError> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    // Every decision below looks at ASCII bytes only; multi-byte characters are either inside a
    // quoted span (copied whole) or rejected, exactly as the UTF-16 reference treats them.
    while i < b.len() {
        let c = b[i];
        let next = b.get(i + 1).copied();
        let tok = match c {
            _ if is_alpha(c) => {
                let start = i;
                i += 1;
                while i < b.len() && is_alnum(b[i]) {
                    i += 1;
                }
                out.push(Tok::Ident(src[start..i].to_owned()));
                continue;
            }
            b'.' => Tok::Dot,
            b'*' => Tok::Star,
            b',' => Tok::Comma,
            b':' => Tok::Colon,
            b'{' => Tok::LBrace,
            b'}' => Tok::RBrace,
            b']' => Tok::RBracket,
            b'(' => Tok::LParen,
            b')' => Tok::RParen,
            b'@' => Tok::Current,
            _ if is_num(c) => {
                let start = i;
                i += 1;
                while i < b.len() && is_num(b[i]) {
                    i += 1;
                }
                out.push(Tok::Number(
                    js::parse_int(&src[start..i]).unwrap_or(f64::NAN),
                ));
                continue;
            }
            b'[' => match next {
                Some(b'?') => {
                    i += 1;
                    Tok::Filter
                }
                Some(b']') => {
                    i += 1;
                    Tok::Flatten
                }
                _ => Tok::LBracket,
            },
            b'"' => {
                let end = scan_quoted(b, i, b'"');
                // The reference hands the span, quotes included, to JSON.parse; an unterminated
                // span (end past the input) never parses.
                if end > b.len() {
                    return Err(LexError("unterminated quoted identifier"));
                }
                match parse(&src[i..end]) {
                    Ok(Value::String(s)) => out.push(Tok::Quoted(s)),
                    _ => return Err(LexError("invalid quoted identifier")),
                }
                i = end;
                continue;
            }
            b'\'' => {
                let end = scan_quoted(b, i, b'\'');
                let body = &src[i + 1..(end - 1).min(b.len())];
                // Only the first escaped quote is unescaped: the reference calls
                // String.prototype.replace with a string pattern.
                out.push(Tok::Literal(Value::String(body.replacen("\\'", "'", 1))));
                i = end;
                continue;
            }
            b'`' => {
                let end = scan_quoted(b, i, b'`');
                let body = &src[i + 1..(end - 1).min(b.len())];
                out.push(Tok::Literal(literal(body)?));
                i = end;
                continue;
            }
            b'<' | b'>' | b'!' | b'=' => {
                let eq = next == Some(b'=');
                let tok = match (c, eq) {
                    (b'<', true) => Tok::Cmp(Cmp::Lte),
                    (b'<', false) => Tok::Cmp(Cmp::Lt),
                    (b'>', true) => Tok::Cmp(Cmp::Gte),
                    (b'>', false) => Tok::Cmp(Cmp::Gt),
                    (b'!', true) => Tok::Cmp(Cmp::Ne),
                    (b'!', false) => Tok::Not,
                    (_, true) => Tok::Cmp(Cmp::Eq),
                    // A lone `=` yields no token in the reference, which then fails on it.
                    (_, false) => return Err(LexError("unknown operator =")),
                };
                i += if eq { 2 } else { 1 };
                out.push(tok);
                continue;
            }
            b' ' | b'\t' | b'\n' => {
                i += 1;
                continue;
            }
            b'&' if next == Some(b'&') => {
                i += 1;
                Tok::And
            }
            b'&' => Tok::Expref,
            b'|' if next == Some(b'|') => {
                i += 1;
                Tok::Or
            }
            b'|' => Tok::Pipe,
            _ => return Err(LexError("unknown character")),
        };
        i += 1;
        out.push(tok);
    }
    out.push(Tok::Eof);
    Ok(out)
}

/// Index one past the closing `quote` of the span opening at `start`, or `len + 1` when the span
/// runs to the end of the input (the reference's cursor does the same).
fn scan_quoted(b: &[u8], start: usize, quote: u8) -> usize {
    let mut i = start + 1;
    while i < b.len() && b[i] != quote {
        if b[i] == b'\\' && matches!(b.get(i + 1), Some(&x) if x == b'\\' || x == quote) {
            i += 2;
        } else {
            i += 1;
        }
    }
    i + 1
}

/// The value of a backtick literal body, as `_consumeLiteral` computes it.
fn literal(body: &str) -> Result<Value, LexError> {
    let text = js::trim_start(body).replacen("\\`", "`", 1);
    let parsed = if looks_like_json(&text) {
        parse(&text)
    } else {
        parse(&format!("\"{text}\""))
    };
    parsed.map_err(|_| LexError("invalid literal"))
}

fn looks_like_json(text: &str) -> bool {
    match text.as_bytes().first() {
        None => false,
        Some(b'[' | b'{' | b'"') => true,
        _ if matches!(text, "true" | "false" | "null") => true,
        Some(b'-' | b'0'..=b'9') => parse(text).is_ok(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_follow_parse_int() {
        let toks = tokenize("[1-2]").unwrap();
        assert_eq!(toks[1], Tok::Number(1.0));
        let Tok::Number(n) = tokenize("-").unwrap()[0] else {
            panic!()
        };
        assert!(n.is_nan());
    }

    #[test]
    fn raw_strings_unescape_only_the_first_quote() {
        let toks = tokenize(r"'a\'b\'c'").unwrap();
        assert_eq!(toks[0], Tok::Literal(Value::from(r"a'b\'c")));
        // Unterminated raw strings run to the end of the input.
        assert_eq!(
            tokenize("'abc").unwrap()[0],
            Tok::Literal(Value::from("abc"))
        );
    }

    #[test]
    fn literals_fall_back_to_strings() {
        assert_eq!(
            tokenize("`foo`").unwrap()[0],
            Tok::Literal(Value::from("foo"))
        );
        assert_eq!(
            tokenize("` true `").unwrap()[0],
            Tok::Literal(Value::from("true "))
        );
        assert_eq!(tokenize("`[1] `").unwrap()[0].clone(), {
            Tok::Literal(parse("[1]").unwrap())
        });
        assert!(tokenize("`{bad`").is_err());
    }

    #[test]
    fn carriage_return_and_lone_equals_are_errors() {
        assert!(tokenize("a\rb").is_err());
        assert!(tokenize("a = b").is_err());
        assert!(tokenize("\"abc").is_err());
        assert!(tokenize("é").is_err());
    }
}
