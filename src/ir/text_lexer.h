// Tokens of the IR text form, and the quoting rules for names and strings shared by the printer
// and the parser.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sy::ir::text {

enum class Tok {
  Ident,     // [A-Za-z_][A-Za-z0-9_.]*  (keywords, op names, dtypes, attribute names)
  Local,     // %name, %123, %"quoted"
  Global,    // @name, @"quoted"
  Number,    // -?digits[.digits][e[+-]digits], -inf, -nan (inf/nan alone are Idents)
  String,    // "..." (text holds the raw token including quotes)
  LParen, RParen, LBracket, RBracket, LBrace, RBrace,
  Comma, Colon, Semi, Equal, Dot, Arrow, Hash, Ellipsis,
  End,
};

struct Token {
  Tok kind;
  std::string_view text;  // raw source text of the token
  int line = 1, col = 1;
  // For Local/Global: the name (unescaped); quoted says it was written "..." (so %"0" is a
  // variable named 0, while %0 is a let-bound value).
  std::string name;
  bool quoted = false;
};

const char* tok_name(Tok k);  // for messages: "identifier", "'('", ...

// Splits the whole text into tokens (ending with an End token). `//` starts a comment to the end
// of the line. Throws sy::Error "line:col: message" on a malformed token.
std::vector<Token> lex(std::string_view src);

// Decodes a String token written by quote(): \" \\ \n \t \r \xHH. Throws sy::Error with the
// token's position on a bad escape.
std::string unquote(const Token& t);
// "..." with the escapes above for quote, backslash and control characters.
std::string quote(std::string_view s);
// True if s can be printed bare after % or @ or as an attribute key: [A-Za-z_][A-Za-z0-9_]*.
bool is_plain_name(std::string_view s);
// The name as written after % or @: bare if plain, else quoted.
std::string name_text(std::string_view s);

}  // namespace sy::ir::text
