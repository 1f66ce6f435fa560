# The MPI layer's model (layout, two-level partition, traffic prediction, communication plans):
# no MPI, so that `cuboid simulate` and the plans' tests build without it. Included from src/dist
# and, when the MPI layer is off, from src/app.
if(NOT TARGET cuboid_dist_model)
  cuboid_library(cuboid_dist_model
    SOURCES
      ${CMAKE_CURRENT_LIST_DIR}/layout.cpp
      ${CMAKE_CURRENT_LIST_DIR}/distribution.cpp
      ${CMAKE_CURRENT_LIST_DIR}/rank_partition.cpp
      ${CMAKE_CURRENT_LIST_DIR}/strategy.cpp
      ${CMAKE_CURRENT_LIST_DIR}/model.cpp
      ${CMAKE_CURRENT_LIST_DIR}/comm_report.cpp
      ${CMAKE_CURRENT_LIST_DIR}/comm_plan.cpp
    LIBS cuboid_partition cuboid_exec_plan fmt::fmt nlohmann_json::nlohmann_json)
endif()
