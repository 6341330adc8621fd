//! `math_eval`: a small, safe arithmetic evaluator (a Pratt parser of our own).
//!
//! Safe by construction: numbers, + - * / % ^, parentheses, the constants `pi` and `e`, and a
//! fixed set of pure functions. No variables, no assignment, no I/O. Input is capped at
//! [`MAX_LENGTH`] characters and [`MAX_DEPTH`] levels of nesting, checked before any recursion,
//! so evaluation time and stack use are bounded by the caps (parsing and evaluating are one
//! linear pass). Errors say what is wrong and at which character.

use std::fmt;

/// Longest expression accepted, in characters.
pub const MAX_LENGTH: usize = 10_000;
/// Deepest nesting of parentheses, function calls and unary signs.
pub const MAX_DEPTH: usize = 64;

const FUNCTIONS: [&str; 18] = [
    "abs", "acos", "asin", "atan", "ceil", "cos", "exp", "floor", "log", "log10", "log2", "max",
    "min", "pow", "round", "sin", "sqrt", "tan",
];

/// Why an expression was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MathError(pub String);

impl fmt::Display for MathError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for MathError {}

fn fail<T>(message: String) -> Result<T, MathError> {
    Err(MathError(message))
}

/// Evaluates `expression`.
///
/// # Errors
/// [`MathError`] describing what is wrong and where.
pub fn evaluate(expression: &str) -> Result<f64, MathError> {
    let length = expression.chars().count();
    if length > MAX_LENGTH {
        return fail(format!(
            "expression is {length} characters long; the limit is {MAX_LENGTH}"
        ));
    }
    let tokens = tokenize(expression)?;
    if tokens.is_empty() {
        return fail("empty expression: give an arithmetic expression such as 2 * (3 + 4)".into());
    }
    let mut parser = Parser {
        tokens,
        at: 0,
        depth: 0,
    };
    let value = parser.expression(0)?;
    if let Some(token) = parser.tokens.get(parser.at) {
        return fail(format!(
            "unexpected {} at position {}",
            token.kind, token.position
        ));
    }
    if !value.is_finite() {
        return fail(format!("the result is not a finite number ({value})"));
    }
    Ok(value)
}

#[derive(Debug, Clone, PartialEq)]
enum Kind {
    Number(f64),
    Name(String),
    Symbol(char),
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Number(n) => write!(f, "number {n}"),
            Self::Name(name) => write!(f, "'{name}'"),
            Self::Symbol(c) => write!(f, "'{c}'"),
        }
    }
}

#[derive(Debug, Clone)]
struct Token {
    kind: Kind,
    position: usize,
}

fn tokenize(text: &str) -> Result<Vec<Token>, MathError> {
    let chars: Vec<char> = text.chars().collect();
    let mut tokens = Vec::new();
    let mut depth = 0_usize;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let start = i;
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        if c.is_ascii_digit() || c == '.' {
            while i < chars.len() && (chars[i].is_ascii_digit() || chars[i] == '.') {
                i += 1;
            }
            if i < chars.len() && matches!(chars[i], 'e' | 'E') {
                let mut j = i + 1;
                if j < chars.len() && matches!(chars[j], '+' | '-') {
                    j += 1;
                }
                if j < chars.len() && chars[j].is_ascii_digit() {
                    i = j;
                    while i < chars.len() && chars[i].is_ascii_digit() {
                        i += 1;
                    }
                }
            }
            let literal: String = chars[start..i].iter().collect();
            let Ok(number) = literal.parse::<f64>() else {
                return fail(format!("'{literal}' at position {start} is not a number"));
            };
            tokens.push(Token {
                kind: Kind::Number(number),
                position: start,
            });
        } else if c.is_ascii_alphabetic() || c == '_' {
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            tokens.push(Token {
                kind: Kind::Name(chars[start..i].iter().collect()),
                position: start,
            });
        } else if "+-*/%^(),".contains(c) {
            if c == '(' {
                depth += 1;
                if depth > MAX_DEPTH {
                    return fail(format!(
                        "parentheses nest deeper than {MAX_DEPTH} levels at position {start}; simplify the expression"
                    ));
                }
            } else if c == ')' {
                depth = depth.saturating_sub(1);
            }
            tokens.push(Token {
                kind: Kind::Symbol(c),
                position: start,
            });
            i += 1;
        } else {
            return fail(format!(
                "unexpected character '{c}' at position {start}: use numbers, + - * / % ^, parentheses, pi, e and functions"
            ));
        }
    }
    Ok(tokens)
}

struct Parser {
    tokens: Vec<Token>,
    at: usize,
    depth: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.at)
    }

    fn end_position(&self) -> usize {
        self.tokens.last().map_or(0, |t| t.position + 1)
    }

    fn expect(&mut self, symbol: char) -> Result<(), MathError> {
        match self.peek() {
            Some(Token {
                kind: Kind::Symbol(c),
                ..
            }) if *c == symbol => {
                self.at += 1;
                Ok(())
            }
            Some(token) => fail(format!(
                "expected '{symbol}' at position {}, found {}",
                token.position, token.kind
            )),
            None => fail(format!(
                "expected '{symbol}' at position {}, but the expression ended",
                self.end_position()
            )),
        }
    }

    fn enter(&mut self, position: usize) -> Result<(), MathError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH * 2 {
            return fail(format!(
                "the expression nests too deeply at position {position}; simplify it"
            ));
        }
        Ok(())
    }

    /// Precedence climbing: binding powers + - 1/2, * / % 3/4, unary 5, ^ 7/6 (right).
    fn expression(&mut self, min_power: u8) -> Result<f64, MathError> {
        let position = self.peek().map_or(self.end_position(), |t| t.position);
        self.enter(position)?;
        let mut left = self.prefix()?;
        while let Some(Token {
            kind: Kind::Symbol(op),
            position,
        }) = self.peek().cloned()
        {
            let (left_power, right_power) = match op {
                '+' | '-' => (1, 2),
                '*' | '/' | '%' => (3, 4),
                '^' => (7, 6),
                _ => break,
            };
            if left_power < min_power {
                break;
            }
            self.at += 1;
            let right = self.expression(right_power)?;
            left = match op {
                '+' => left + right,
                '-' => left - right,
                '*' => left * right,
                '/' if right == 0.0 => {
                    return fail(format!("division by zero at position {position}"));
                }
                '/' => left / right,
                '%' if right == 0.0 => {
                    return fail(format!("modulo by zero at position {position}"));
                }
                '%' => left % right,
                _ => left.powf(right),
            };
        }
        self.depth -= 1;
        Ok(left)
    }

    fn prefix(&mut self) -> Result<f64, MathError> {
        let Some(token) = self.peek().cloned() else {
            return fail(format!(
                "the expression ends where a number was expected (position {})",
                self.end_position()
            ));
        };
        self.at += 1;
        match token.kind {
            Kind::Number(n) => Ok(n),
            Kind::Symbol('-') => Ok(-self.expression(5)?),
            Kind::Symbol('+') => self.expression(5),
            Kind::Symbol('(') => {
                let value = self.expression(0)?;
                self.expect(')')?;
                Ok(value)
            }
            Kind::Name(name) if self.peek().is_some_and(|t| t.kind == Kind::Symbol('(')) => {
                self.call(&name, token.position)
            }
            Kind::Name(name) => match name.as_str() {
                "pi" | "PI" => Ok(std::f64::consts::PI),
                "e" | "E" => Ok(std::f64::consts::E),
                _ => fail(format!(
                    "unknown name '{name}' at position {}: only the constants pi and e can be used",
                    token.position
                )),
            },
            kind => fail(format!("unexpected {kind} at position {}", token.position)),
        }
    }

    fn call(&mut self, name: &str, position: usize) -> Result<f64, MathError> {
        if !FUNCTIONS.contains(&name) {
            return fail(format!(
                "unknown function '{name}' at position {position}: available functions are {}",
                FUNCTIONS.join(", ")
            ));
        }
        self.expect('(')?;
        let mut args = Vec::new();
        if !self.peek().is_some_and(|t| t.kind == Kind::Symbol(')')) {
            loop {
                args.push(self.expression(0)?);
                if self.peek().is_some_and(|t| t.kind == Kind::Symbol(',')) {
                    self.at += 1;
                } else {
                    break;
                }
            }
        }
        self.expect(')')?;
        let arity = |wanted: &str, ok: bool| -> Result<(), MathError> {
            if ok {
                Ok(())
            } else {
                fail(format!(
                    "{name}() at position {position} takes {wanted}, got {}",
                    args.len()
                ))
            }
        };
        let one = |f: fn(f64) -> f64| -> Result<f64, MathError> {
            arity("1 argument", args.len() == 1)?;
            Ok(f(args[0]))
        };
        match name {
            "sqrt" => {
                arity("1 argument", args.len() == 1)?;
                if args[0] < 0.0 {
                    return fail(format!(
                        "sqrt() at position {position} of a negative number ({})",
                        args[0]
                    ));
                }
                Ok(args[0].sqrt())
            }
            "log" => {
                arity("1 or 2 arguments", matches!(args.len(), 1 | 2))?;
                if args[0] <= 0.0 {
                    return fail(format!(
                        "log() at position {position} needs a positive number, got {}",
                        args[0]
                    ));
                }
                Ok(if args.len() == 2 {
                    args[0].ln() / args[1].ln()
                } else {
                    args[0].ln()
                })
            }
            "min" | "max" => {
                arity("at least 1 argument", !args.is_empty())?;
                let pick = if name == "min" { f64::min } else { f64::max };
                Ok(args.iter().copied().fold(args[0], pick))
            }
            "pow" => {
                arity("2 arguments", args.len() == 2)?;
                Ok(args[0].powf(args[1]))
            }
            "abs" => one(f64::abs),
            "acos" => one(f64::acos),
            "asin" => one(f64::asin),
            "atan" => one(f64::atan),
            "ceil" => one(f64::ceil),
            "cos" => one(f64::cos),
            "exp" => one(f64::exp),
            "floor" => one(f64::floor),
            "log10" => one(f64::log10),
            "log2" => one(f64::log2),
            "round" => one(f64::round),
            "sin" => one(f64::sin),
            _ => one(f64::tan),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eval(text: &str) -> f64 {
        evaluate(text).unwrap_or_else(|err| panic!("{text}: {err}"))
    }

    fn error(text: &str) -> String {
        evaluate(text).unwrap_err().to_string()
    }

    #[test]
    fn arithmetic_follows_the_usual_rules() {
        assert_eq!(eval("2+2"), 4.0);
        assert_eq!(eval("2 + 3 * 4"), 14.0);
        assert_eq!(eval("(2 + 3) * 4"), 20.0);
        assert_eq!(eval("2 ^ 3 ^ 2"), 512.0);
        assert_eq!(eval("-2 ^ 2"), -4.0);
        assert_eq!(eval("--3"), 3.0);
        assert_eq!(eval("10 % 4 - 7 / 2"), -1.5);
        assert_eq!(eval("1.5e3 + .5"), 1500.5);
    }

    #[test]
    fn functions_and_constants() {
        assert_eq!(eval("sqrt(16) + abs(-2)"), 6.0);
        assert!((eval("sin(pi / 2)") - 1.0).abs() < 1e-12);
        assert!((eval("log(e)") - 1.0).abs() < 1e-12);
        assert!((eval("log(8, 2)") - 3.0).abs() < 1e-12);
        assert_eq!(eval("min(3, 1, 2) + max(4, 9)"), 10.0);
        assert_eq!(eval("pow(2, 10)"), 1024.0);
        // Every function the tool's description advertises is available.
        assert!((eval("tan(pi / 4)") - 1.0).abs() < 1e-12);
    }

    #[test]
    fn bad_input_is_refused_with_what_and_where() {
        assert_eq!(error("1/0"), "division by zero at position 1");
        assert_eq!(
            error("x + 1"),
            "unknown name 'x' at position 0: only the constants pi and e can be used"
        );
        assert!(error("print(1)").starts_with(
            "unknown function 'print' at position 0: available functions are abs, acos,"
        ));
        assert_eq!(
            error("2 +"),
            "the expression ends where a number was expected (position 3)"
        );
        assert_eq!(
            error("(1 + 2"),
            "expected ')' at position 6, but the expression ended"
        );
        assert_eq!(error("1 2"), "unexpected number 2 at position 2");
        assert_eq!(
            error("2 $ 3"),
            "unexpected character '$' at position 2: use numbers, + - * / % ^, parentheses, pi, e and functions"
        );
        assert_eq!(
            error("sqrt(-4)"),
            "sqrt() at position 0 of a negative number (-4)"
        );
        assert_eq!(
            error("pow(2)"),
            "pow() at position 0 takes 2 arguments, got 1"
        );
        assert_eq!(
            error(" "),
            "empty expression: give an arithmetic expression such as 2 * (3 + 4)"
        );
        assert_eq!(error("10 ^ 400"), "the result is not a finite number (inf)");
    }

    #[test]
    fn huge_and_deep_inputs_are_refused_without_recursion() {
        let long = "1+".repeat(600_000) + "1";
        assert_eq!(
            error(&long),
            "expression is 1200001 characters long; the limit is 10000"
        );
        let deep = format!("{}1{}", "(".repeat(100_000), ")".repeat(100_000));
        assert_eq!(
            error(&deep),
            "expression is 200001 characters long; the limit is 10000"
        );
        let nested = format!("{}1{}", "(".repeat(65), ")".repeat(65));
        assert_eq!(
            error(&nested),
            "parentheses nest deeper than 64 levels at position 64; simplify the expression"
        );
        let signs = format!("{}1", "-".repeat(5000));
        assert_eq!(
            error(&signs),
            "the expression nests too deeply at position 128; simplify it"
        );
    }
}
