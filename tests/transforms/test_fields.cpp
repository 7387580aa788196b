// Every registered transform's declaration (conveyor/transforms/fields.hpp), looped over the
// registry: its names are what the Python classes, their stubs and the fuzzer are made from, so
// each must be a usable argument name, given once, and `required` exactly where the default is an
// empty optional that validate() refuses.

#include <conveyor/transforms/program.hpp>

#include <catch2/catch.hpp>

#include <cctype>
#include <optional>
#include <set>
#include <string>
#include <type_traits>

using namespace conveyor;

namespace {

template <class T>
constexpr bool is_optional = false;
template <class T>
constexpr bool is_optional<std::optional<T>> = true;

/// Whether `t` is refused by validate() with a message naming `field`.
template <class T>
bool refused_naming(const T& t, const std::string& field) {
  try {
    t.validate();
  } catch (const ConfigError& e) {
    return std::string(e.what()).find(field) != std::string::npos;
  }
  return false;
}

template <class T>
void check_declaration() {
  INFO(T::name);
  CHECK(std::string(T::summary).size() > 20);
  std::set<std::string> seen;
  bool defaults_seen = false;
  const T defaults{};
  for_each_field(defaults, [&](const FieldName& f, const auto& field) {
    using Type = std::remove_cvref_t<decltype(field)>;
    const std::string name = f.name;
    INFO(name);
    CHECK(!name.empty());
    CHECK(std::islower(static_cast<unsigned char>(name[0])));
    for (const char c : name)  // snake_case: a Python argument's name (v1 has a digit)
      CHECK((std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '_'));
    CHECK(seen.insert(name).second);
    // torchvision's required arguments come first, and Python's classes need them there
    if (f.required) CHECK(!defaults_seen);
    else defaults_seen = true;
    if constexpr (is_optional<Type>) {
      if (f.required) {
        CHECK(!field.has_value());
        T without = defaults;
        CHECK(refused_naming(without, name));
      }
    } else {
      // a required field that is not an optional is a container's list: empty is refused
      if (f.required) CHECK_THROWS_AS(defaults.validate(), ConfigError);
    }
  });
  CHECK(seen.size() == std::size(T::fields));
}

template <class... Ts>
void check_all(TransformList<Ts...>) {
  (check_declaration<Ts>(), ...);
}

}  // namespace

TEST_CASE("every registered transform names its fields once, required ones first and refused when missing",
          "[transforms][fields]") {
  check_all(PixelTransforms{});
}

TEST_CASE("a sequence of one value is a fixed sigma, and refused as degrees or shear, as torchvision does",
          "[transforms][fields]") {
  const GaussianBlur blur{.kernel_size = 3, .sigma = Numbers::listed(0.5)};
  CHECK_NOTHROW(blur.validate());
  CHECK(blur.sigma_range() == std::array<double, 2>{0.5, 0.5});
  const RandomRotation rotation{.degrees = Numbers::listed(10.0)};
  CHECK_THROWS_WITH(rotation.validate(), Catch::Contains("if degrees is a sequence, it must be of len 2"));
  const RandomAffine affine{.degrees = 0.0, .shear = Numbers::listed(10.0)};
  CHECK_THROWS_WITH(affine.validate(), Catch::Contains("if shear is a sequence, it must be of len 2"));
  const RandomRotation plain_rotation{.degrees = 10.0};
  const RandomAffine plain_affine{.degrees = 0.0, .shear = 10.0};
  CHECK_NOTHROW(plain_rotation.validate());
  CHECK_NOTHROW(plain_affine.validate());
}
