//! Pratt parser for JMESPath with the grammar and quirks of npm `jmespath` 0.16.0: which
//! expressions compile decides whether an argument is JMESPath at all, so acceptance must match.

use std::rc::Rc;

use crate::value::Value;

use super::lexer::{tokenize, Cmp, Tok};

/// Deeper nesting is rejected so parsing and evaluation cannot exhaust the (1 MiB, wasm)
/// stack; src/projection/tests_stack.rs runs the deepest accepted expressions on such a stack.
pub(crate) const MAX_NESTING: usize = 128;

/// A node of the syntax tree, mirroring the reference's AST node types.
#[derive(Debug)]
pub(crate) enum Node {
    /// Where the reference's parser yields `undefined` instead of a node (e.g. `a.` or `()`);
    /// evaluating it throws, as visiting `undefined` does there.
    Missing,
    Field(String),
    Subexpression(Box<Node>, Box<Node>),
    IndexExpression(Box<Node>, Box<Node>),
    Index(f64),
    Slice([Option<f64>; 3]),
    Projection(Box<Node>, Box<Node>),
    ValueProjection(Box<Node>, Box<Node>),
    FilterProjection {
        left: Box<Node>,
        right: Box<Node>,
        condition: Box<Node>,
    },
    Comparator(Cmp, Box<Node>, Box<Node>),
    Flatten(Box<Node>),
    Identity,
    Current,
    MultiSelectList(Vec<Node>),
    /// Keys are shared so that building each object does not allocate them again.
    MultiSelectHash(Vec<(Rc<str>, Node)>),
    Or(Box<Node>, Box<Node>),
    And(Box<Node>, Box<Node>),
    Not(Box<Node>),
    Literal(Value),
    Pipe(Box<Node>, Box<Node>),
    /// A call; the name is `None` when the callee node has no `name` (an unknown function).
    Function(Option<String>, Vec<Node>),
    ExpressionReference(Box<Node>),
}

impl Node {
    /// The `name` property the reference reads off a callee node.
    fn callee_name(&self) -> Option<String> {
        match self {
            Node::Field(name) | Node::Function(Some(name), _) => Some(name.clone()),
            Node::Comparator(op, ..) => Some(format!("{op:?}").to_uppercase()),
            _ => None,
        }
    }
}

/// Why an expression does not compile.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SyntaxError(pub(crate) &'static str);

type Parsed = Result<Node, SyntaxError>;

/// Compiles `src` to a syntax tree.
pub(super) fn parse(src: &str) -> Parsed {
    let tokens = tokenize(src).map_err(|e| SyntaxError(e.0))?;
    let mut p = Parser {
        tokens,
        index: 0,
        depth: 0,
    };
    let ast = p.expression(0)?;
    if *p.peek(0) != Tok::Eof {
        return Err(SyntaxError("unexpected token after expression"));
    }
    Ok(ast)
}

struct Parser {
    tokens: Vec<Tok>,
    index: usize,
    depth: usize,
}

fn bx(node: Node) -> Box<Node> {
    Box::new(node)
}

impl Parser {
    fn peek(&self, n: usize) -> &Tok {
        // The token list always ends with Eof, and the parser never looks past it.
        self.tokens
            .get(self.index + n)
            .or(self.tokens.last())
            .unwrap_or(&Tok::Eof)
    }

    fn advance(&mut self) -> Tok {
        let tok = self.peek(0).clone();
        self.index += 1;
        tok
    }

    fn expect(&mut self, want: &Tok) -> Result<(), SyntaxError> {
        if self.peek(0) == want {
            self.index += 1;
            Ok(())
        } else {
            Err(SyntaxError("unexpected token"))
        }
    }

    fn bp_above(&self, rbp: u8) -> bool {
        self.peek(0).binding_power().is_some_and(|bp| rbp < bp)
    }

    fn expression(&mut self, rbp: u8) -> Parsed {
        let entry = self.depth;
        self.deepen()?;
        let token = self.advance();
        let mut left = self.nud(token)?;
        while self.bp_above(rbp) {
            // Each infix step wraps `left` in a new node, so chains deepen the tree too.
            self.deepen()?;
            let token = self.advance();
            left = self.led(token, left)?;
        }
        self.depth = entry;
        Ok(left)
    }

    fn deepen(&mut self) -> Result<(), SyntaxError> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(SyntaxError("expression nested too deeply"));
        }
        Ok(())
    }

    fn nud(&mut self, token: Tok) -> Parsed {
        Ok(match token {
            Tok::Literal(v) => Node::Literal(v),
            Tok::Ident(name) => Node::Field(name),
            Tok::Quoted(name) => {
                if *self.peek(0) == Tok::LParen {
                    return Err(SyntaxError("quoted identifier used as a function name"));
                }
                Node::Field(name)
            }
            Tok::Not => Node::Not(bx(self.expression(45)?)),
            Tok::Star => {
                let right = if *self.peek(0) == Tok::RBracket {
                    Node::Identity
                } else {
                    self.projection_rhs(20)?
                };
                Node::ValueProjection(bx(Node::Identity), bx(right))
            }
            Tok::Filter => self.led(Tok::Filter, Node::Identity)?,
            Tok::LBrace => self.multiselect_hash()?,
            Tok::Flatten => {
                let left = Node::Flatten(bx(Node::Identity));
                Node::Projection(bx(left), bx(self.projection_rhs(9)?))
            }
            Tok::LBracket => match (self.peek(0), self.peek(1)) {
                (Tok::Number(_) | Tok::Colon, _) => {
                    let right = self.index_expression()?;
                    self.project_if_slice(Node::Identity, right)?
                }
                (Tok::Star, Tok::RBracket) => {
                    self.index += 2;
                    Node::Projection(bx(Node::Identity), bx(self.projection_rhs(20)?))
                }
                _ => self.multiselect_list()?,
            },
            Tok::Current => Node::Current,
            Tok::Expref => Node::ExpressionReference(bx(self.expression(0)?)),
            Tok::LParen => {
                let mut args = self.paren_args(false)?;
                if args.is_empty() {
                    Node::Missing
                } else {
                    args.swap_remove(0)
                }
            }
            _ => return Err(SyntaxError("invalid token")),
        })
    }

    /// Arguments up to `)`: `@` is taken alone, and commas separate only in calls.
    fn paren_args(&mut self, commas: bool) -> Result<Vec<Node>, SyntaxError> {
        let mut args = Vec::new();
        while *self.peek(0) != Tok::RParen {
            let arg = if *self.peek(0) == Tok::Current {
                self.index += 1;
                Node::Current
            } else {
                self.expression(0)?
            };
            if commas && *self.peek(0) == Tok::Comma {
                self.index += 1;
            }
            args.push(arg);
        }
        self.expect(&Tok::RParen)?;
        Ok(args)
    }

    fn led(&mut self, token: Tok, left: Node) -> Parsed {
        Ok(match token {
            Tok::Dot => {
                if *self.peek(0) != Tok::Star {
                    Node::Subexpression(bx(left), bx(self.dot_rhs(40)?))
                } else {
                    self.index += 1;
                    Node::ValueProjection(bx(left), bx(self.projection_rhs(40)?))
                }
            }
            Tok::Pipe => Node::Pipe(bx(left), bx(self.expression(1)?)),
            Tok::Or => Node::Or(bx(left), bx(self.expression(2)?)),
            Tok::And => Node::And(bx(left), bx(self.expression(3)?)),
            Tok::LParen => {
                if matches!(left, Node::Missing) {
                    return Err(SyntaxError("call on nothing"));
                }
                let name = left.callee_name();
                Node::Function(name, self.paren_args(true)?)
            }
            Tok::Filter => {
                let condition = self.expression(0)?;
                self.expect(&Tok::RBracket)?;
                let right = if *self.peek(0) == Tok::Flatten {
                    Node::Identity
                } else {
                    self.projection_rhs(21)?
                };
                Node::FilterProjection {
                    left: bx(left),
                    right: bx(right),
                    condition: bx(condition),
                }
            }
            Tok::Flatten => {
                let left = Node::Flatten(bx(left));
                Node::Projection(bx(left), bx(self.projection_rhs(9)?))
            }
            Tok::Cmp(op) => Node::Comparator(op, bx(left), bx(self.expression(5)?)),
            Tok::LBracket => {
                if matches!(self.peek(0), Tok::Number(_) | Tok::Colon) {
                    let right = self.index_expression()?;
                    self.project_if_slice(left, right)?
                } else {
                    self.expect(&Tok::Star)?;
                    self.expect(&Tok::RBracket)?;
                    Node::Projection(bx(left), bx(self.projection_rhs(20)?))
                }
            }
            _ => return Err(SyntaxError("invalid token")),
        })
    }

    fn index_expression(&mut self) -> Parsed {
        if *self.peek(0) == Tok::Colon || *self.peek(1) == Tok::Colon {
            return self.slice_expression();
        }
        let value = match self.advance() {
            Tok::Number(n) => n,
            _ => return Err(SyntaxError("expected a number")),
        };
        self.expect(&Tok::RBracket)?;
        Ok(Node::Index(value))
    }

    fn slice_expression(&mut self) -> Parsed {
        let mut parts = [None; 3];
        let mut index = 0;
        while *self.peek(0) != Tok::RBracket && index < 3 {
            match self.peek(0) {
                Tok::Colon => index += 1,
                Tok::Number(n) => parts[index] = Some(*n),
                _ => return Err(SyntaxError("unexpected token in slice")),
            }
            self.index += 1;
        }
        self.expect(&Tok::RBracket)?;
        Ok(Node::Slice(parts))
    }

    fn project_if_slice(&mut self, left: Node, right: Node) -> Parsed {
        let is_slice = matches!(right, Node::Slice(_));
        let index_expr = Node::IndexExpression(bx(left), bx(right));
        if is_slice {
            Ok(Node::Projection(
                bx(index_expr),
                bx(self.projection_rhs(20)?),
            ))
        } else {
            Ok(index_expr)
        }
    }

    fn dot_rhs(&mut self, rbp: u8) -> Parsed {
        match self.peek(0) {
            Tok::Ident(_) | Tok::Quoted(_) | Tok::Star => self.expression(rbp),
            Tok::LBracket => {
                self.index += 1;
                self.multiselect_list()
            }
            Tok::LBrace => {
                self.index += 1;
                self.multiselect_hash()
            }
            _ => Ok(Node::Missing),
        }
    }

    fn projection_rhs(&mut self, rbp: u8) -> Parsed {
        match self.peek(0) {
            t if t.binding_power().is_some_and(|bp| bp < 10) => Ok(Node::Identity),
            Tok::LBracket | Tok::Filter => self.expression(rbp),
            Tok::Dot => {
                self.index += 1;
                self.dot_rhs(rbp)
            }
            _ => Err(SyntaxError("unexpected token after projection")),
        }
    }

    fn multiselect_list(&mut self) -> Parsed {
        let mut items = Vec::new();
        while *self.peek(0) != Tok::RBracket {
            items.push(self.expression(0)?);
            if *self.peek(0) == Tok::Comma {
                self.index += 1;
                if *self.peek(0) == Tok::RBracket {
                    return Err(SyntaxError("trailing comma in list"));
                }
            }
        }
        self.expect(&Tok::RBracket)?;
        Ok(Node::MultiSelectList(items))
    }

    fn multiselect_hash(&mut self) -> Parsed {
        let mut pairs = Vec::new();
        loop {
            let key = match self.advance() {
                Tok::Ident(k) | Tok::Quoted(k) => k,
                _ => return Err(SyntaxError("expected an identifier")),
            };
            self.expect(&Tok::Colon)?;
            pairs.push((Rc::from(key), self.expression(0)?));
            match self.peek(0) {
                Tok::Comma => self.index += 1,
                Tok::RBrace => {
                    self.index += 1;
                    break;
                }
                _ => {}
            }
        }
        Ok(Node::MultiSelectHash(pairs))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_what_the_reference_accepts() {
        for ok in [
            "a.b[0].c",
            "a[*].{x: b, y: c}",
            "[a b]",
            "{a: b c: d}",
            "f(a b)",
            "f(a,)",
            "a.",
            "()",
            "[:::]",
            "[1:2 3]",
            "'unterminated",
            "a || ()",
            "&a | b",
            "foo(@)",
            "[?a > `1`]",
        ] {
            assert!(parse(ok).is_ok(), "{ok}");
        }
    }

    #[test]
    fn rejects_what_the_reference_rejects() {
        for bad in [
            ".a",
            "a.1",
            "()()",
            "\"f\"(a)",
            "length(@.a)",
            "(@ == a)",
            "[a,]",
            "{}",
            "a[*]`1`",
            "[1:2:3:4]",
            "a =b",
            "",
            "a[",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn nesting_is_bounded() {
        let deep = "(".repeat(MAX_NESTING + 1) + "a" + &")".repeat(MAX_NESTING + 1);
        assert!(parse(&deep).is_err());
        let ok = "(".repeat(100) + "a" + &")".repeat(100);
        assert!(parse(&ok).is_ok());
        let chain = vec!["a"; MAX_NESTING + 1].join(".");
        assert!(parse(&chain).is_err());
    }
}
