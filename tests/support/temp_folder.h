// TempFolder: a fresh folder under the system's temporary directory (mkdtemp,
// so parallel test programs never share one), removed with everything in it
// when the object goes, whether the test passed or not.
#pragma once

#include <string>

namespace strata::testing {

class TempFolder {
 public:
  // `prefix` names the folder for whoever finds one left behind: PREFIX-XXXXXX.
  explicit TempFolder(const std::string& prefix);
  ~TempFolder();
  TempFolder(const TempFolder&) = delete;
  TempFolder& operator=(const TempFolder&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace strata::testing
