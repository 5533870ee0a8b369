//! Diagnostics: a message, the span it is about, notes, and a help line on how to fix it.
//! Rendered with codespan-reporting, as rustc renders its own.

use crate::ast::Span;
use codespan_reporting::diagnostic::{Diagnostic as CsDiagnostic, Label, Severity};
use codespan_reporting::files::SimpleFile;
use codespan_reporting::term::{self, termcolor};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// An error, or a warning (NVRTC's about a body, `imac check --arch`), which fails
    /// nothing.
    pub warning: bool,
    pub message: String,
    pub span: Span,
    /// Said under the underlined span.
    pub label: String,
    /// Other places that explain the error, e.g. where a name was first declared.
    pub related: Vec<(Span, String)>,
    /// What else the reporter said (NVRTC's notes, such as each candidate of an overload
    /// that did not match), shown before the help.
    pub notes: Vec<String>,
    pub help: Option<String>,
    /// The checker's name for the error's class (`CheckError::code`), e.g.
    /// `"UnknownSymbol"`; `None` for syntax errors. Not rendered: tests use it to know
    /// which classes the snapshots cover.
    pub code: Option<&'static str>,
}

impl Diagnostic {
    pub fn error(message: impl Into<String>, span: Span, label: impl Into<String>) -> Self {
        Diagnostic {
            warning: false,
            message: message.into(),
            span,
            label: label.into(),
            related: Vec::new(),
            notes: Vec::new(),
            help: None,
            code: None,
        }
    }

    pub fn warning(message: impl Into<String>, span: Span, label: impl Into<String>) -> Self {
        Diagnostic {
            warning: true,
            ..Diagnostic::error(message, span, label)
        }
    }

    pub fn with_code(mut self, code: &'static str) -> Self {
        self.code = Some(code);
        self
    }

    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    pub fn with_note(mut self, note: impl Into<String>) -> Self {
        self.notes.push(note.into());
        self
    }

    pub fn with_related(mut self, span: Span, label: impl Into<String>) -> Self {
        self.related.push((span, label.into()));
        self
    }

    fn to_codespan(&self) -> CsDiagnostic<()> {
        let mut labels = vec![Label::primary((), self.span.range()).with_message(&self.label)];
        labels.extend(
            self.related
                .iter()
                .map(|(span, msg)| Label::secondary((), span.range()).with_message(msg)),
        );
        let notes = (self.notes.iter().map(|n| format!("note: {n}")))
            .chain(self.help.iter().map(|h| format!("help: {h}")))
            .collect();
        let severity = if self.warning {
            Severity::Warning
        } else {
            Severity::Error
        };
        CsDiagnostic::new(severity)
            .with_message(&self.message)
            .with_labels(labels)
            .with_notes(notes)
    }
}

/// A spec file's name and text, for rendering and for line numbers.
#[derive(Debug, Clone)]
pub struct Source {
    pub name: String,
    pub text: String,
}

impl Source {
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> Self {
        Source {
            name: name.into(),
            text: text.into(),
        }
    }

    /// 1-based line and column of a byte offset.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let before = &self.text[..offset.min(self.text.len())];
        let line = before.matches('\n').count() + 1;
        let col = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
        (line, col)
    }

    /// Renders diagnostics as rustc does, without colour.
    pub fn render(&self, diagnostics: &[Diagnostic]) -> String {
        let file = SimpleFile::new(&self.name, &self.text);
        let config = term::Config::default();
        let mut out = String::new();
        for d in diagnostics {
            // Spans come from this file's own parse, so codespan's lookups cannot fail.
            let _ = term::emit_to_string(&mut out, &config, &file, &d.to_codespan());
        }
        out
    }

    /// Renders diagnostics to a stream, coloured as its `ColorChoice` says.
    pub fn emit(&self, out: &mut dyn termcolor::WriteColor, diagnostics: &[Diagnostic]) {
        let file = SimpleFile::new(&self.name, &self.text);
        let config = term::Config::default();
        for d in diagnostics {
            // Writing to a Vec or a terminal cannot fail in a way worth reporting here.
            let _ = term::emit_to_write_style(out, &config, &file, &d.to_codespan());
        }
    }
}
