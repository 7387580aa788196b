#pragma once
// A strict reader of JSON text (RFC 8259), for tests of what the library writes as JSON: it throws
// at the first byte that is not valid JSON, and gives the values back for checking.

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace conveyor_test {

struct Json {
  using Object = std::map<std::string, Json>;
  using Array = std::vector<Json>;
  std::variant<std::nullptr_t, bool, double, std::string, std::shared_ptr<Array>, std::shared_ptr<Object>> value;

  [[nodiscard]] const Object& object() const { return *std::get<std::shared_ptr<Object>>(value); }
  [[nodiscard]] const Json& operator[](const std::string& key) const { return object().at(key); }
  [[nodiscard]] double number() const { return std::get<double>(value); }
  [[nodiscard]] const std::string& string() const { return std::get<std::string>(value); }
};

namespace detail {

class JsonReader {
 public:
  explicit JsonReader(std::string_view text) : s_(text) {}

  Json document() {
    Json v = value();
    space();
    if (i_ != s_.size()) fail("text after the value");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error("invalid JSON at byte " + std::to_string(i_) + ": " + what);
  }
  void space() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) ++i_;
  }
  char next() {
    if (i_ >= s_.size()) fail("unexpected end");
    return s_[i_++];
  }
  void expect(std::string_view word) {
    if (s_.substr(i_, word.size()) != word) fail("expected " + std::string(word));
    i_ += word.size();
  }

  Json value() {
    space();
    if (i_ >= s_.size()) fail("unexpected end");
    const char c = s_[i_];
    if (c == '{') return {object()};
    if (c == '[') return {array()};
    if (c == '"') return {string()};
    if (c == 't') {
      expect("true");
      return {true};
    }
    if (c == 'f') {
      expect("false");
      return {false};
    }
    if (c == 'n') {
      expect("null");
      return {nullptr};
    }
    return {number()};
  }

  std::shared_ptr<Json::Object> object() {
    auto o = std::make_shared<Json::Object>();
    ++i_;
    space();
    if (i_ < s_.size() && s_[i_] == '}') {
      ++i_;
      return o;
    }
    for (;;) {
      space();
      if (i_ >= s_.size() || s_[i_] != '"') fail("expected a key");
      std::string key = string();
      space();
      if (next() != ':') fail("expected ':'");
      if (!o->emplace(std::move(key), value()).second) fail("a repeated key");
      space();
      const char c = next();
      if (c == '}') return o;
      if (c != ',') fail("expected ',' or '}'");
    }
  }

  std::shared_ptr<Json::Array> array() {
    auto a = std::make_shared<Json::Array>();
    ++i_;
    space();
    if (i_ < s_.size() && s_[i_] == ']') {
      ++i_;
      return a;
    }
    for (;;) {
      a->push_back(value());
      space();
      const char c = next();
      if (c == ']') return a;
      if (c != ',') fail("expected ',' or ']'");
    }
  }

  std::string string() {
    ++i_;  // the opening quote
    std::string out;
    for (;;) {
      const char c = next();
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) fail("a control character in a string");
      if (c != '\\') {
        out += c;
        continue;
      }
      switch (const char e = next()) {
        case '"': case '\\': case '/': out += e; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          unsigned code = 0;
          for (int k = 0; k < 4; ++k) {
            const char h = next();
            const int d = h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10 : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
            if (d < 0) fail("a bad \\u escape");
            code = code * 16 + unsigned(d);
          }
          if (code >= 0x80) fail("\\u beyond ASCII (not needed here)");
          out += static_cast<char>(code);
          break;
        }
        default: fail("a bad escape");
      }
    }
  }

  double number() {
    const std::size_t start = i_;
    if (i_ < s_.size() && s_[i_] == '-') ++i_;
    const auto digits = [&] {
      const std::size_t from = i_;
      while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') ++i_;
      if (i_ == from) fail("expected a digit");
    };
    if (i_ < s_.size() && s_[i_] == '0')
      ++i_;
    else
      digits();
    if (i_ < s_.size() && s_[i_] == '.') {
      ++i_;
      digits();
    }
    if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
      ++i_;
      if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) ++i_;
      digits();
    }
    return std::stod(std::string(s_.substr(start, i_ - start)));
  }

  std::string_view s_;
  std::size_t i_ = 0;
};

}  // namespace detail

/// `text` read as one JSON value. @throws std::runtime_error naming the byte where it stops being JSON.
inline Json parse_json(std::string_view text) { return detail::JsonReader(text).document(); }

}  // namespace conveyor_test
