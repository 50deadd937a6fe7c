// Parser for PyTorch's operator schema grammar (the subset Backplane needs):
//
//   [ns::]name[.overload](arg, ..., [*,] kwarg, ...) -> ret | (ret, ...)
//   arg  := type [alias] [list] [?] name [= default]
//   type := Tensor | int | SymInt | float | bool | Scalar | ScalarType | str
//
// Errors carry the 1-based column of the offending token so that a plugin
// author can find the mistake in a long schema string.
#include "schema.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>

namespace bp::core {
namespace {

class Parser {
 public:
  explicit Parser(const std::string& text) : text_(text) {}

  Status Parse(Schema* out) {
    Schema s;
    BP_RETURN_IF_ERROR(ParseName(&s));
    BP_RETURN_IF_ERROR(Expect('('));
    BP_RETURN_IF_ERROR(ParseArguments(&s));
    SkipSpace();
    if (!Consume("->")) return Fail("expected '->'", pos_);
    BP_RETURN_IF_ERROR(ParseReturns(&s));
    SkipSpace();
    if (pos_ != text_.size()) return Fail("unexpected trailing text", pos_);
    *out = std::move(s);
    return Status::Ok();
  }

 private:
  Status Fail(const std::string& what, size_t at) const {
    return Error(BP_STATUS_INVALID_ARGUMENT,
                 "schema '" + text_ + "': " + what + " at column " + std::to_string(at + 1));
  }

  void SkipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool Peek(char c) {
    SkipSpace();
    return pos_ < text_.size() && text_[pos_] == c;
  }
  bool Consume(const char* token) {
    SkipSpace();
    size_t n = std::char_traits<char>::length(token);
    if (text_.compare(pos_, n, token) != 0) return false;
    pos_ += n;
    return true;
  }
  Status Expect(char c) {
    SkipSpace();
    if (pos_ >= text_.size()) return Fail(std::string("expected '") + c + "' but the schema ended", pos_);
    if (text_[pos_] != c) {
      return Fail(std::string("expected '") + c + "', got '" + text_[pos_] + "'", pos_);
    }
    ++pos_;
    return Status::Ok();
  }
  // Identifier: [A-Za-z_][A-Za-z0-9_]*
  bool Ident(std::string* out) {
    SkipSpace();
    size_t start = pos_;
    if (pos_ >= text_.size() || !(std::isalpha(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) {
      return false;
    }
    while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) {
      ++pos_;
    }
    *out = text_.substr(start, pos_ - start);
    return true;
  }
  Status ExpectIdent(const char* what, std::string* out) {
    SkipSpace();
    size_t at = pos_;
    if (!Ident(out)) {
      if (at >= text_.size()) return Fail(std::string("expected ") + what + " but the schema ended", at);
      return Fail(std::string("expected ") + what + ", got '" + text_[at] + "'", at);
    }
    return Status::Ok();
  }

  Status ParseName(Schema* s) {
    std::string first;
    BP_RETURN_IF_ERROR(ExpectIdent("an operator name", &first));
    if (Consume("::")) {
      s->ns = first;
      BP_RETURN_IF_ERROR(ExpectIdent("an operator name after '::'", &s->name));
    } else {
      s->name = first;
    }
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == '.') {
      ++pos_;
      BP_RETURN_IF_ERROR(ExpectIdent("an overload name after '.'", &s->overload));
    }
    return Status::Ok();
  }

  // Alias annotation "(a)" or "(a!)"; pos_ is at '('.
  Status ParseAlias(std::string* alias_set, bool* is_mutable) {
    ++pos_;
    BP_RETURN_IF_ERROR(ExpectIdent("an alias set name", alias_set));
    *is_mutable = Peek('!');
    if (*is_mutable) ++pos_;
    return Expect(')');
  }

  struct TypeInfo {
    ArgType type = ArgType::kTensor;
    bool optional = false;
    int32_t list_size = 0;
    std::string alias_set;
    bool is_mutable = false;
  };

  Status ParseType(TypeInfo* t) {
    SkipSpace();
    size_t at = pos_;
    std::string base;
    BP_RETURN_IF_ERROR(ExpectIdent("a type", &base));
    bool is_list = false;
    if (Peek('(')) BP_RETURN_IF_ERROR(ParseAlias(&t->alias_set, &t->is_mutable));
    if (Peek('[')) {
      ++pos_;
      is_list = true;
      SkipSpace();
      size_t num_at = pos_;
      if (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
        int64_t n = 0;
        while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
          n = n * 10 + (text_[pos_++] - '0');
          if (n > BP_MAX_NDIM * 64) return Fail("list size too large", num_at);
        }
        if (n == 0) return Fail("list size must be positive", num_at);
        t->list_size = static_cast<int32_t>(n);
      }
      BP_RETURN_IF_ERROR(Expect(']'));
    }
    if (Peek('?')) {
      ++pos_;
      t->optional = true;
    }
    if (base == "Tensor") {
      t->type = is_list ? ArgType::kTensorList : ArgType::kTensor;
      if (is_list && t->list_size != 0) return Fail("Tensor lists cannot have a fixed size", at);
    } else if (base == "int" || base == "SymInt") {
      t->type = is_list ? ArgType::kIntList : ArgType::kInt;
    } else if (base == "float" || base == "bool" || base == "Scalar" || base == "ScalarType" ||
               base == "str") {
      if (is_list) return Fail("lists of '" + base + "' are not supported", at);
      t->type = base == "float"    ? ArgType::kFloat
                : base == "bool"   ? ArgType::kBool
                : base == "Scalar" ? ArgType::kScalar
                : base == "str"    ? ArgType::kString
                                   : ArgType::kScalarType;
    } else {
      return Fail("unknown type '" + base + "'", at);
    }
    if (!t->alias_set.empty() && t->type != ArgType::kTensor && t->type != ArgType::kTensorList) {
      return Fail("alias annotations are only allowed on Tensor", at);
    }
    return Status::Ok();
  }

  Status ParseNumber(DefaultValue* v, bool* is_float) {
    SkipSpace();
    size_t at = pos_;
    size_t end = pos_;
    if (end < text_.size() && (text_[end] == '-' || text_[end] == '+')) ++end;
    bool seen_digit = false;
    *is_float = false;
    while (end < text_.size()) {
      char c = text_[end];
      if (std::isdigit(static_cast<unsigned char>(c))) {
        seen_digit = true;
      } else if (c == '.' || c == 'e' || c == 'E') {
        *is_float = true;
      } else if ((c == '-' || c == '+') && (text_[end - 1] == 'e' || text_[end - 1] == 'E')) {
        // exponent sign
      } else {
        break;
      }
      ++end;
    }
    if (!seen_digit) return Fail("expected a default value", at);
    std::string tok = text_.substr(at, end - at);
    errno = 0;
    char* stop = nullptr;
    if (*is_float) {
      v->kind = BP_VALUE_DOUBLE;
      v->d = std::strtod(tok.c_str(), &stop);
    } else {
      v->kind = BP_VALUE_INT;
      v->i = std::strtoll(tok.c_str(), &stop, 10);
    }
    if (stop != tok.c_str() + tok.size()) return Fail("malformed number '" + tok + "'", at);
    if (errno == ERANGE) return Fail("number '" + tok + "' out of range", at);
    pos_ = end;
    return Status::Ok();
  }

  Status ParseDefault(const Argument& arg, DefaultValue* v) {
    SkipSpace();
    size_t at = pos_;
    std::string word;
    if (Peek('\'') || Peek('"')) {
      char q = text_[pos_++];
      size_t close = text_.find(q, pos_);
      if (close == std::string::npos) return Fail("unterminated string default", at);
      v->kind = BP_VALUE_STRING;
      v->str = text_.substr(pos_, close - pos_);
      pos_ = close + 1;
      if (arg.type != ArgType::kString) return Fail("string default for a non-str argument", at);
      return Status::Ok();
    }
    if (Peek('[')) {
      ++pos_;
      v->kind = BP_VALUE_INT_LIST;
      if (arg.type != ArgType::kIntList) return Fail("list default for a non-list argument", at);
      if (!Peek(']')) {
        for (;;) {
          DefaultValue e;
          bool is_float = false;
          size_t eat = pos_;
          BP_RETURN_IF_ERROR(ParseNumber(&e, &is_float));
          if (is_float) return Fail("int list default holds a float", eat);
          v->ints.push_back(e.i);
          if (Peek(',')) {
            ++pos_;
            continue;
          }
          break;
        }
      }
      BP_RETURN_IF_ERROR(Expect(']'));
      if (!v->ints.empty() && arg.list_size != 0 && v->ints.size() != static_cast<size_t>(arg.list_size)) {
        return Fail("default of int[" + std::to_string(arg.list_size) + "] has " +
                        std::to_string(v->ints.size()) + " elements",
                    at);
      }
      return Status::Ok();
    }
    size_t word_at = pos_;
    if (Ident(&word)) {
      if (word == "None") {
        if (!arg.optional) return Fail("default None for non-optional argument '" + arg.name + "'", word_at);
        v->kind = BP_VALUE_NONE;
        return Status::Ok();
      }
      if (word == "True" || word == "False") {
        if (arg.type != ArgType::kBool && arg.type != ArgType::kScalar) {
          return Fail("bool default for a non-bool argument", word_at);
        }
        v->kind = BP_VALUE_BOOL;
        v->b = word == "True";
        return Status::Ok();
      }
      return Fail("unknown default value '" + word + "'", word_at);
    }
    bool is_float = false;
    BP_RETURN_IF_ERROR(ParseNumber(v, &is_float));
    switch (arg.type) {
      case ArgType::kInt:
        if (is_float) return Fail("float default for an int argument", at);
        return Status::Ok();
      case ArgType::kIntList:
        // PyTorch's "int[2] stride=1" means [1, 1].
        if (is_float) return Fail("float default for an int list argument", at);
        if (arg.list_size == 0) return Fail("scalar default for an unsized int list", at);
        v->ints.assign(static_cast<size_t>(arg.list_size), v->i);
        v->kind = BP_VALUE_INT_LIST;
        v->i = 0;
        return Status::Ok();
      case ArgType::kFloat:
        if (!is_float) {
          v->kind = BP_VALUE_DOUBLE;
          v->d = static_cast<double>(v->i);
          v->i = 0;
        }
        return Status::Ok();
      case ArgType::kScalar:
        return Status::Ok();
      default:
        return Fail("numeric default for a non-numeric argument", at);
    }
  }

  Status ParseArguments(Schema* s) {
    bool kwarg_only = false;
    std::set<std::string> names;
    if (Peek(')')) {
      ++pos_;
      return Status::Ok();
    }
    for (;;) {
      SkipSpace();
      size_t at = pos_;
      if (Peek('*')) {
        if (kwarg_only) return Fail("'*' appears twice", at);
        ++pos_;
        kwarg_only = true;
      } else {
        TypeInfo t;
        BP_RETURN_IF_ERROR(ParseType(&t));
        Argument arg;
        arg.type = t.type;
        arg.optional = t.optional;
        arg.list_size = t.list_size;
        arg.alias_set = t.alias_set;
        arg.is_mutable = t.is_mutable;
        arg.kwarg_only = kwarg_only;
        SkipSpace();
        size_t name_at = pos_;
        BP_RETURN_IF_ERROR(ExpectIdent("an argument name", &arg.name));
        if (!names.insert(arg.name).second) return Fail("duplicate argument '" + arg.name + "'", name_at);
        if (Peek('=')) {
          ++pos_;
          DefaultValue v;
          BP_RETURN_IF_ERROR(ParseDefault(arg, &v));
          arg.default_value = std::move(v);
        }
        s->arguments.push_back(std::move(arg));
      }
      SkipSpace();
      if (pos_ < text_.size() && text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      return Expect(')');
    }
  }

  Status ParseOneReturn(Return* r, bool allow_name) {
    SkipSpace();
    size_t at = pos_;
    TypeInfo t;
    BP_RETURN_IF_ERROR(ParseType(&t));
    if (t.optional) return Fail("optional return types are not supported", at);
    r->type = t.type;
    r->alias_set = t.alias_set;
    r->is_mutable = t.is_mutable;
    std::string ignored_name;  // "(Tensor values, Tensor indices)": names are documentation
    if (allow_name) Ident(&ignored_name);
    return Status::Ok();
  }

  Status ParseReturns(Schema* s) {
    if (Peek('(')) {
      ++pos_;
      if (Peek(')')) {
        ++pos_;
        return Status::Ok();
      }
      for (;;) {
        Return r;
        BP_RETURN_IF_ERROR(ParseOneReturn(&r, true));
        s->returns.push_back(std::move(r));
        if (Peek(',')) {
          ++pos_;
          continue;
        }
        return Expect(')');
      }
    }
    Return r;
    BP_RETURN_IF_ERROR(ParseOneReturn(&r, false));
    s->returns.push_back(std::move(r));
    return Status::Ok();
  }

  const std::string& text_;
  size_t pos_ = 0;
};


std::string TypeString(ArgType type, int32_t list_size, const std::string& alias, bool is_mutable,
                       bool optional) {
  std::string out = TypeName(type);
  if (!alias.empty()) out += "(" + alias + (is_mutable ? "!)" : ")");
  if (type == ArgType::kTensorList || type == ArgType::kIntList) {
    out += "[" + (list_size ? std::to_string(list_size) : std::string()) + "]";
  }
  if (optional) out += "?";
  return out;
}

// Shortest decimal text that reads back as the same double, always marked as a
// float ("1." style avoided: PyTorch writes 1e-05 and 0.5; we add ".0" to integers).
std::string FloatText(double d) {
  char buf[64];
  for (int prec = 1; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof(buf), "%.*g", prec, d);
    if (std::strtod(buf, nullptr) == d) break;
  }
  std::string s = buf;
  if (std::isfinite(d) && s.find_first_of(".eE") == std::string::npos) s += ".0";
  return s;
}

}  // namespace

const char* TypeName(ArgType t) {
  switch (t) {
    case ArgType::kTensor: return "Tensor";
    case ArgType::kTensorList: return "Tensor";
    case ArgType::kInt: return "int";
    case ArgType::kIntList: return "int";
    case ArgType::kFloat: return "float";
    case ArgType::kBool: return "bool";
    case ArgType::kScalar: return "Scalar";
    case ArgType::kScalarType: return "ScalarType";
    case ArgType::kString: return "str";
  }
  return "?";
}

std::string DefaultText(const DefaultValue& v) {
  switch (v.kind) {
    case BP_VALUE_NONE: return "None";
    case BP_VALUE_INT: return std::to_string(v.i);
    case BP_VALUE_DOUBLE: return FloatText(v.d);
    case BP_VALUE_BOOL: return v.b ? "True" : "False";
    case BP_VALUE_STRING: return "'" + v.str + "'";
    case BP_VALUE_INT_LIST: {
      std::string out = "[";
      for (size_t i = 0; i < v.ints.size(); ++i) out += (i ? ", " : "") + std::to_string(v.ints[i]);
      return out + "]";
    }
    default: return "?";
  }
}

std::string Schema::full_name() const {
  std::string out = ns.empty() ? name : ns + "::" + name;
  if (!overload.empty()) out += "." + overload;
  return out;
}

std::string Schema::to_string() const {
  std::string out = full_name() + "(";
  bool kw = false;
  for (size_t i = 0; i < arguments.size(); ++i) {
    const Argument& a = arguments[i];
    if (i) out += ", ";
    if (a.kwarg_only && !kw) {
      out += "*, ";
      kw = true;
    }
    out += TypeString(a.type, a.list_size, a.alias_set, a.is_mutable, a.optional) + " " + a.name;
    if (a.default_value) out += "=" + DefaultText(*a.default_value);
  }
  out += ") -> ";
  if (returns.size() == 1) {
    const Return& r = returns[0];
    out += TypeString(r.type, 0, r.alias_set, r.is_mutable, false);
  } else {
    out += "(";
    for (size_t i = 0; i < returns.size(); ++i) {
      const Return& r = returns[i];
      out += (i ? ", " : "") + TypeString(r.type, 0, r.alias_set, r.is_mutable, false);
    }
    out += ")";
  }
  return out;
}

Status parse_schema(const std::string& text, Schema* out) {
  if (out == nullptr) return Error(BP_STATUS_INVALID_ARGUMENT, "parse_schema: 'out' is NULL");
  return Parser(text).Parse(out);
}

}  // namespace bp::core
