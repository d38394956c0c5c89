//! The node kinds the walk tells apart, looked up by kind id in a table made
//! once: comparing `Node::kind()` strings costs a symbol-name lookup, a
//! `strlen` and a UTF-8 check per call, on every node.

use std::sync::OnceLock;

use tree_sitter::{Language, Node};

/// A node kind of tree-sitter-bash that the walk treats specially.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Any kind not listed here.
    Other,
    Command,
    CommandName,
    RedirectedStatement,
    VariableAssignment,
    VariableAssignments,
    VariableName,
    CStyleForStatement,
    ForStatement,
    Array,
    DeclarationCommand,
    UnsetCommand,
    FileRedirect,
    HeredocRedirect,
    HerestringRedirect,
    HeredocContent,
    HeredocBody,
    Comment,
    Word,
    Number,
    String,
    StringContent,
    RawString,
    AnsiCString,
    TranslatedString,
    Concatenation,
    BraceExpression,
    Regex,
    ExtglobPattern,
    /// The `$` token.
    Dollar,
}

impl Kind {
    /// The kind of `name`, the way `Node::kind()` spells it.
    fn of_name(name: &str) -> Kind {
        match name {
            "command" => Kind::Command,
            "command_name" => Kind::CommandName,
            "redirected_statement" => Kind::RedirectedStatement,
            "variable_assignment" => Kind::VariableAssignment,
            "variable_assignments" => Kind::VariableAssignments,
            "variable_name" => Kind::VariableName,
            "c_style_for_statement" => Kind::CStyleForStatement,
            "for_statement" => Kind::ForStatement,
            "array" => Kind::Array,
            "declaration_command" => Kind::DeclarationCommand,
            "unset_command" => Kind::UnsetCommand,
            "file_redirect" => Kind::FileRedirect,
            "heredoc_redirect" => Kind::HeredocRedirect,
            "herestring_redirect" => Kind::HerestringRedirect,
            "heredoc_content" => Kind::HeredocContent,
            "heredoc_body" => Kind::HeredocBody,
            "comment" => Kind::Comment,
            "word" => Kind::Word,
            "number" => Kind::Number,
            "string" => Kind::String,
            "string_content" => Kind::StringContent,
            "raw_string" => Kind::RawString,
            "ansi_c_string" => Kind::AnsiCString,
            "translated_string" => Kind::TranslatedString,
            "concatenation" => Kind::Concatenation,
            "brace_expression" => Kind::BraceExpression,
            "regex" => Kind::Regex,
            "extglob_pattern" => Kind::ExtglobPattern,
            "$" => Kind::Dollar,
            _ => Kind::Other,
        }
    }
}

/// The kind of `node`. `Node::kind_id()` names the same symbol as
/// `Node::kind()` (both resolve aliases), so this equals
/// `Kind::of_name(node.kind())`, named or not.
pub(crate) fn kind(node: Node<'_>) -> Kind {
    static TABLE: OnceLock<Vec<Kind>> = OnceLock::new();
    let table = TABLE.get_or_init(|| {
        let language = Language::new(tree_sitter_bash::LANGUAGE);
        (0..language.node_kind_count())
            .map(|id| {
                u16::try_from(id)
                    .ok()
                    .and_then(|id| language.node_kind_for_id(id))
                    .map_or(Kind::Other, Kind::of_name)
            })
            .collect()
    });
    table
        .get(usize::from(node.kind_id()))
        .copied()
        .unwrap_or(Kind::Other)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every node of a line that holds every kind above has the kind its name says.
    #[test]
    fn the_table_agrees_with_kind_names() {
        let line = "for ((i = 0; i < 3; i++)); do X=1 Y=2; done; export A=$'x' B=$\"y\"; unset c; \
                    d=1 cmd \"s $x\" 'r' a{b,c} 12 >f 2>&1 <<EOF\nbody $y\nEOF\n\
                    [[ a =~ ^b ]]; e <<< w; # c\n?(x) f";
        let mut parser = tree_sitter::Parser::new();
        parser
            .set_language(&tree_sitter_bash::LANGUAGE.into())
            .unwrap();
        let tree = parser.parse(line, None).unwrap();
        let mut cursor = tree.walk();
        let mut seen = std::collections::HashSet::new();
        loop {
            let node = cursor.node();
            assert_eq!(kind(node), Kind::of_name(node.kind()), "{}", node.kind());
            seen.insert(format!("{:?}", kind(node)));
            if cursor.goto_first_child() {
                continue;
            }
            while !cursor.goto_next_sibling() {
                if !cursor.goto_parent() {
                    assert!(seen.len() > 20, "{seen:?}");
                    return;
                }
            }
        }
    }
}
