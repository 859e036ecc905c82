// Package sqlfilter is the SQL92 property filter of a subscription
// (RocketMQ MessageSelector.bySql): a hand-written lexer, a
// recursive-descent parser and an evaluator over a message's properties.
//
// # Grammar
//
//	expr      := and { OR and }
//	and       := not { AND not }
//	not       := NOT not | primary
//	primary   := '(' expr ')'
//	           | operand [ cmp operand
//	                     | [NOT] BETWEEN operand AND operand
//	                     | [NOT] IN '(' literal { ',' literal } ')'
//	                     | IS [NOT] NULL ]
//	cmp       := '=' | '<>' | '<' | '<=' | '>' | '>='
//	operand   := property | literal
//	literal   := 'string' | integer | decimal | TRUE | FALSE
//
// Keywords are case-insensitive; a property is [A-Za-z_$][A-Za-z0-9_$.-]*
// that is not a keyword (TAGS names the message's tag). Strings are in
// single quotes (” is a quote). Numbers take an optional sign, a decimal
// point and an exponent; integers are 64-bit. A bare operand stands for a
// boolean only when it is a property or TRUE/FALSE.
//
// Checked when parsing (a *SyntaxError with the 1-based character
// position): <, <=, >, >= and BETWEEN take numbers (a string or boolean
// literal there is an error); NULL is written only after IS; at most
// MaxLength characters and MaxDepth nested NOTs and parentheses.
//
// # Types and nulls
//
// Property values are strings. Against a numeric literal a property is
// read as a number (integer, else decimal); a value that is not a number
// makes the comparison false. Against a string literal it compares as a
// string, against TRUE/FALSE as a boolean ("true"/"false", any case; other
// values: false). Two properties compare equal as strings and order as
// numbers (false unless both are numbers). Literals of different types are
// never equal and never ordered (false).
//
// A missing property is NULL: any comparison, BETWEEN or IN with it is
// UNKNOWN, and so is a bare missing property. NOT UNKNOWN is UNKNOWN;
// FALSE AND UNKNOWN is FALSE; TRUE OR UNKNOWN is TRUE (SQL92 three-valued
// logic). IS NULL and IS NOT NULL are never UNKNOWN. A message matches
// only when the whole expression is TRUE.
//
// The package imports only the standard library (core imports it).
package sqlfilter
