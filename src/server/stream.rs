//! A reply sent as Server-Sent Events: a `tools/call` whose client asked for progress (a
//! `progressToken`, and `text/event-stream` in `Accept`) gets its progress notifications as
//! events while it runs, then its answer as the last event. A call that reports nothing is
//! answered with JSON as every other request is.

use crate::http::HttpResponse;
use crate::ports::{Gone, Progress, ReplyStream};
use serde_json::Value as Json;
use std::cell::Cell;

/// The reply of one request, which may turn into a stream.
pub(crate) struct Streamed<'a> {
    out: &'a dyn ReplyStream,
    /// CORS headers for an allowed browser origin, which the head carries.
    origin: Option<&'a str>,
    started: Cell<bool>,
}

impl<'a> Streamed<'a> {
    /// The reply through `out`, for a request from `origin` (when a browser sent it).
    pub(crate) fn new(out: &'a dyn ReplyStream, origin: Option<&'a str>) -> Streamed<'a> {
        Streamed {
            out,
            origin,
            started: Cell::new(false),
        }
    }

    /// Where a call with `token` reports its progress.
    pub(crate) fn progress(&'a self, token: Json) -> TokenProgress<'a> {
        TokenProgress { reply: self, token }
    }

    /// The request's `response`, as the stream's last event once the stream started (its head
    /// went out already, so only its body counts).
    pub(crate) fn finish(&self, response: HttpResponse) -> HttpResponse {
        if !self.started.get() {
            return response;
        }
        let data = String::from_utf8_lossy(&response.body);
        HttpResponse::new(200, EVENT_STREAM, event(&data))
    }

    fn send(&self, data: &str) -> Result<(), Gone> {
        if !self.started.replace(true) {
            let mut headers = vec![
                ("Content-Type".to_owned(), EVENT_STREAM.to_owned()),
                ("Cache-Control".to_owned(), "no-cache".to_owned()),
            ];
            if let Some(origin) = self.origin {
                headers.extend(super::checks::with_cors(HttpResponse::empty(200), origin).headers);
            }
            self.out.start(headers);
        }
        self.out.send(event(data))
    }
}

const EVENT_STREAM: &str = "text/event-stream";

/// One SSE event carrying a JSON-RPC message. JSON text has no line breaks of its own (they are
/// escaped in strings), so it fits one `data:` line.
fn event(data: &str) -> Vec<u8> {
    format!("event: message\ndata: {data}\n\n").into_bytes()
}

/// The progress of one call, identified to its client by the token it sent.
pub(crate) struct TokenProgress<'a> {
    reply: &'a Streamed<'a>,
    token: Json,
}

impl Progress for TokenProgress<'_> {
    fn report(&self, done: u64, total: Option<u64>, message: &str) -> Result<(), Gone> {
        let mut note = format!(
            "{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":\
             {{\"progressToken\":{},\"progress\":{done},\"message\":",
            self.token
        );
        crate::value::write_json_string(message, &mut note);
        if let Some(total) = total {
            note.push_str(&format!(",\"total\":{total}"));
        }
        note.push_str("}}");
        self.reply.send(&note)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::cell::RefCell;

    #[derive(Default)]
    struct Recorded {
        head: RefCell<Option<Vec<(String, String)>>>,
        body: RefCell<Vec<u8>>,
        gone: Cell<bool>,
    }

    impl ReplyStream for Recorded {
        fn start(&self, headers: Vec<(String, String)>) {
            self.head.borrow_mut().get_or_insert(headers);
        }
        fn send(&self, bytes: Vec<u8>) -> Result<(), Gone> {
            if self.gone.get() {
                return Err(Gone);
            }
            self.body.borrow_mut().extend(bytes);
            Ok(())
        }
    }

    #[test]
    fn progress_starts_the_stream_and_the_answer_ends_it() {
        let out = Recorded::default();
        let reply = Streamed::new(&out, Some("https://app.example"));
        let progress = reply.progress(json!("tok-1"));
        progress.report(5, Some(60), "run in_progress").unwrap();
        progress.report(15, None, "still").unwrap();
        let head = out.head.borrow().clone().unwrap();
        assert!(head.contains(&("Content-Type".into(), "text/event-stream".into())));
        assert!(head.contains(&(
            "Access-Control-Allow-Origin".into(),
            "https://app.example".into()
        )));
        let answer = HttpResponse::new(
            200,
            "application/json",
            r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
        );
        let last = reply.finish(answer);
        assert_eq!(last.header("Content-Type"), Some("text/event-stream"));
        assert_eq!(
            String::from_utf8(out.body.borrow().clone()).unwrap(),
            "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":\
             {\"progressToken\":\"tok-1\",\"progress\":5,\"message\":\"run in_progress\",\"total\":60}}\n\n\
             event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":\
             {\"progressToken\":\"tok-1\",\"progress\":15,\"message\":\"still\"}}\n\n"
        );
        assert_eq!(
            String::from_utf8(last.body).unwrap(),
            "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n"
        );
        out.gone.set(true);
        assert_eq!(progress.report(20, None, "x"), Err(Gone));
    }

    #[test]
    fn a_reply_without_progress_stays_as_it_is() {
        let out = Recorded::default();
        let reply = Streamed::new(&out, None);
        let answer = HttpResponse::new(200, "application/json", "{}");
        assert_eq!(reply.finish(answer.clone()), answer);
        assert!(out.head.borrow().is_none());
    }
}
