//! Rules that would have stopped repeated questions.
